-- Why: a user placed in a tenant that is not there would meet a foreign key naming only itself
-- (users_tenant_id_fkey); the writers that take a tenant (the service role's) say which one is missing.
create function memory_private.check_tenant(p_tenant_id uuid)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    if p_tenant_id is not null and not exists (select 1 from memory.tenants as t where t.id = p_tenant_id) then
        raise exception using errcode = '23503', message = format('tenant %s not found', p_tenant_id);
    end if;
end
$$;

revoke all on function memory_private.check_tenant(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_tenant(uuid) to service_role;
