-- Why: seed 001's delete_session returns how many turns went with it.
create function memory.delete_conversation(p_conversation_id uuid)
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
    delete from memory.conversations as c where c.id = p_conversation_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'conversation not found';
    end if;
    return v_turns;
end
$$;

revoke all on function memory.delete_conversation(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.delete_conversation(uuid) to authenticated, service_role;
