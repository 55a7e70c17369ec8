-- Why: seed 001's delete_session returns how many turns went with it. A signed-in user deletes
-- only their own (row-level security); the service role acting for a user names them (p_user_id),
-- so another user's conversation is not found there too.
create function memory.delete_conversation(p_conversation_id uuid, p_user_id uuid default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_turns integer;
begin
    select count(distinct m.turn_number) into v_turns
    from memory.messages as m
    where m.conversation_id = p_conversation_id;
    delete from memory.conversations as c
    where c.id = p_conversation_id and (p_user_id is null or c.user_id = p_user_id);
    if not found then
        raise exception using errcode = 'P0002', message = 'conversation not found';
    end if;
    return v_turns;
end
$$;

revoke all on function memory.delete_conversation(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.delete_conversation(uuid, uuid) to authenticated, service_role;
