-- Why: seed 000 keeps one running conversation per user, and seed 002 asks for
-- `GET /api/conversations/current`; an advisory lock stops concurrent first requests making two.
-- p_match keeps a user's kinds of conversation apart; retention arguments apply only to a new one.
create function memory.current_conversation(
    p_user_id uuid default null,
    p_ttl interval default null,
    p_window_turns integer default null,
    p_match jsonb default '{}'
)
returns memory.conversations
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_conversation memory.conversations;
begin
    perform pg_advisory_xact_lock(hashtextextended('supamem.current_conversation:' || v_user::text, 0));
    select c.* into v_conversation from memory.find_conversation(v_user, p_match) as c;
    if not found then
        v_conversation := memory.create_conversation(
            v_user, p_metadata => p_match, p_ttl => p_ttl, p_window_turns => p_window_turns
        );
    end if;
    return v_conversation;
end
$$;

revoke all on function memory.current_conversation(uuid, interval, integer, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.current_conversation(uuid, interval, integer, jsonb) to authenticated, service_role;
