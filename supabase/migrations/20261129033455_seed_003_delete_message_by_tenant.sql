-- Seed 003's delete_message(message_id, tenant_id) in SQL: a message of another tenant is not found,
-- as a missing one is (the tenant was checked by the Python client before).
set check_function_bodies = off;

create or replace function memory.delete_tenant_message(p_message_id bigint, p_tenant_id uuid)
returns void
language plpgsql
set search_path to ''
as $function$
begin
    delete from memory.messages as m where m.id = p_message_id and m.tenant_id is not distinct from p_tenant_id;
    if not found then
        raise exception using errcode = 'P0002', message = format('message %s not found', p_message_id);
    end if;
end
$function$;

revoke all on function memory.delete_tenant_message(bigint, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.delete_tenant_message(bigint, uuid) to authenticated, service_role;
