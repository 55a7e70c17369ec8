-- The message right before and right after a position in a conversation
-- (memory_private.message_before / message_after, inlined): the embedding context, the edit
-- trigger and the delete trigger read a few index entries around the position instead of walking
-- the conversation up to it; the delete trigger looks for each deleted message's next one only up to
-- the next deleted message, so a run of deleted messages is read once.
set check_function_bodies = off;

create or replace function memory_private.message_after(
    p_conversation_id uuid,
    p_turn_number integer,
    p_role text,
    p_until_turn integer default null::integer,
    p_until_role text default null::text
)
returns setof memory.messages
language sql
stable
as $function$
    select nm.*
    from memory.messages as nm
    where nm.conversation_id = p_conversation_id
        and nm.turn_number >= p_turn_number
        and (nm.turn_number > p_turn_number or nm.role < p_role)
        and nm.turn_number <= coalesce(p_until_turn, 2147483647)
        and (p_until_turn is null or nm.turn_number < p_until_turn or nm.role > p_until_role)
    order by nm.turn_number asc, nm.role desc
    limit 1
$function$;

create or replace function memory_private.message_before(p_conversation_id uuid, p_turn_number integer, p_role text)
returns setof memory.messages
language sql
stable
as $function$
    select pm.*
    from memory.messages as pm
    where pm.conversation_id = p_conversation_id
        and pm.turn_number <= p_turn_number
        and (pm.turn_number < p_turn_number or pm.role > p_role)
    order by pm.turn_number desc, pm.role asc
    limit 1
$function$;

create or replace function memory_private.context_deleted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users uuid[];
begin
    -- Each deleted message's next one, looked for only up to the next deleted message: a run of
    -- deleted messages (a sweep, a trim) is read once, not once per message.
    with deleted as (
        select o.conversation_id, o.turn_number, o.role,
            lead(o.turn_number) over w as next_turn, lead(o.role) over w as next_role
        from old_messages as o
        window w as (partition by o.conversation_id order by o.turn_number, o.role desc)
    ),
    dropped as (
        delete from memory_private.message_embeddings as e
        using deleted as d
        cross join lateral memory_private.message_after(
            d.conversation_id, d.turn_number, d.role, d.next_turn, d.next_role
        ) as n
        where e.message_id = n.id
        returning e.user_id
    )
    select array_agg(distinct d.user_id) into v_users from dropped as d;
    perform memory_private.enqueue('embed', '{}', 'embed:' || u.id, u.id, null, true) from unnest(v_users) as u (id);
    return null;
end
$function$;

create or replace function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if tg_op = 'UPDATE' then
        if tg_table_name = 'messages' then
            delete from memory_private.message_embeddings as e
            where e.message_id = new.id or e.message_id = (
                select a.id from memory_private.message_after(new.conversation_id, new.turn_number, new.role) as a
            );
        else
            delete from memory_private.memory_embeddings as e where e.memory_id = new.id;
        end if;
    end if;
    perform memory_private.enqueue('embed', '{}', 'embed:' || new.user_id, new.user_id, null, true);
    return null;
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text)
language sql
stable
set search_path to ''
as $function$
    (
        select 'message', m.id::text, coalesce(right(p.content, c.chars) || e'\n', '') || m.content
        from memory.messages as m
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral memory_private.message_before(m.conversation_id, m.turn_number, m.role) as p
            on c.chars > 0
        where m.user_id = p_user_id and not exists (
            select 1 from memory_private.message_embeddings as e
            where e.message_id = m.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by m.id desc
        limit p_limit
    )
    union all
    (
        select 'memory', mm.id::text, mm.content
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null and not exists (
            select 1 from memory_private.memory_embeddings as e
            where e.memory_id = mm.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by mm.created_at desc, mm.id
        limit p_limit
    )
    limit p_limit
$function$;


revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;
revoke all on function memory_private.message_after(uuid, integer, text, integer, text)
from public, anon, authenticated, service_role;
grant execute on function memory_private.message_after(uuid, integer, text, integer, text) to service_role;
revoke all on function memory_private.message_before(uuid, integer, text) from public,
anon,
authenticated,
service_role;
grant execute on function memory_private.message_before(uuid, integer, text) to service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
