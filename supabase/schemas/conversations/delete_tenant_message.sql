-- Why: seed 003's delete_message(message_id, tenant_id): all its calls are isolated by tenant, so
-- a message of another tenant is not found (P0002), as a missing one is, and stays; a null tenant
-- is the system's (users of no tenant). An app serving many tenants with the service key cannot
-- delete across them by a wrong id. Runs as the caller: a signed-in user deletes only their own.
create function memory.delete_tenant_message(p_message_id bigint, p_tenant_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.messages as m where m.id = p_message_id and m.tenant_id is not distinct from p_tenant_id;
    if not found then
        raise exception using errcode = 'P0002', message = format('message %s not found', p_message_id);
    end if;
end
$$;

revoke all on function memory.delete_tenant_message(bigint, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.delete_tenant_message(bigint, uuid) to authenticated, service_role;
