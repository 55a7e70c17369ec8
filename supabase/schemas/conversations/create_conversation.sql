-- Why: one way to start a conversation, whatever the seed calls it (conversation, session). A
-- client may choose the id (a session it had to start while the database was unreachable).
create function memory.create_conversation(
    p_user_id uuid default null,
    p_title text default null,
    p_mode text default 'chat',
    p_profile_id uuid default null,
    p_remember boolean default null,
    p_metadata jsonb default '{}',
    p_ttl interval default null,
    p_window_turns integer default null,
    p_id uuid default null
)
returns memory.conversations
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.writing_user(p_user_id);
    v_conversation memory.conversations;
begin
    insert into memory.conversations (id, user_id, title, mode, profile_id, remember, metadata, ttl, window_turns)
    values (coalesce(p_id, gen_random_uuid()), v_user, p_title, coalesce(p_mode, 'chat'), p_profile_id, p_remember,
        coalesce(p_metadata, '{}'), p_ttl, p_window_turns)
    on conflict (id) do nothing
    returning * into v_conversation;
    -- Only a chosen id can be taken; the table's refusal would name only its key.
    if not found then
        raise exception using errcode = '23505', message = format('conversation id %s is taken', p_id);
    end if;
    return v_conversation;
end
$$;

revoke all on function memory.create_conversation(uuid, text, text, uuid, boolean, jsonb, interval, integer, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.create_conversation(uuid, text, text, uuid, boolean, jsonb, interval, integer, uuid)
to authenticated, service_role;
