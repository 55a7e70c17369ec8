-- Why: seed 001 hands out session ids; a session is a conversation with the default policy.
create function memory.create_session(p_user_id uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
begin
    return (memory.create_conversation(p_user_id)).id;
end
$$;

revoke all on function memory.create_session(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.create_session(uuid) to authenticated, service_role;
