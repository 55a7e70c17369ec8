-- memory.delete_conversation takes the user the service role acts for (p_user_id): another user's
-- conversation is not found, checked in SQL instead of by the Python client before the call.
drop function if exists memory.delete_conversation(p_conversation_id uuid);

set check_function_bodies = off;

create or replace function memory.delete_conversation(p_conversation_id uuid, p_user_id uuid default null::uuid)
returns integer
language plpgsql
set search_path to ''
as $function$
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
$function$;

revoke all on function memory.delete_conversation(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.delete_conversation(uuid, uuid) to authenticated, service_role;
