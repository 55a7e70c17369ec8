-- Why: a conversation's order is its turns, and in a turn the question before the answer (role
-- desc, as messages_conversation_turn_role_key holds it). These name the message right before and
-- right after a position, for the embedding context and the triggers that keep it true. The index
-- scan starts at the position's own turn (and stops at p_until_turn), so a lookup reads the few
-- entries around it however long the conversation. No SET clause: the planner inlines them into the
-- caller's statement, which runs them once per row; every name is schema-qualified.
create function memory_private.message_before(p_conversation_id uuid, p_turn_number integer, p_role text)
returns setof memory.messages
language sql
stable
as $$
    select pm.*
    from memory.messages as pm
    where pm.conversation_id = p_conversation_id
        and pm.turn_number <= p_turn_number
        and (pm.turn_number < p_turn_number or pm.role > p_role)
    order by pm.turn_number desc, pm.role asc
    limit 1
$$;

revoke all on function memory_private.message_before(uuid, integer, text)
from public, anon, authenticated, service_role;
grant execute on function memory_private.message_before(uuid, integer, text) to service_role;

-- The message right after a position and, given p_until, before that position.
create function memory_private.message_after(
    p_conversation_id uuid, p_turn_number integer, p_role text,
    p_until_turn integer default null, p_until_role text default null
)
returns setof memory.messages
language sql
stable
as $$
    select nm.*
    from memory.messages as nm
    where nm.conversation_id = p_conversation_id
        and nm.turn_number >= p_turn_number
        and (nm.turn_number > p_turn_number or nm.role < p_role)
        and nm.turn_number <= coalesce(p_until_turn, 2147483647)
        and (p_until_turn is null or nm.turn_number < p_until_turn or nm.role > p_until_role)
    order by nm.turn_number asc, nm.role desc
    limit 1
$$;

revoke all on function memory_private.message_after(uuid, integer, text, integer, text)
from public, anon, authenticated, service_role;
grant execute on function memory_private.message_after(uuid, integer, text, integer, text) to service_role;
