-- Why: seed 003's delete_message reports a missing message instead of succeeding silently.
create function memory.delete_message(p_message_id bigint)
returns void
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.messages as m where m.id = p_message_id;
    if not found then
        raise exception using errcode = 'P0002', message = format('message %s not found', p_message_id);
    end if;
end
$$;

revoke all on function memory.delete_message(bigint) from public, anon, authenticated, service_role;
grant execute on function memory.delete_message(bigint) to authenticated, service_role;
