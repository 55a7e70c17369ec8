-- Why: policies need "which tenants does the caller administer" once per statement, without
-- granting callers read access to the admin table of other tenants.
create function memory_private.administered_tenants()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return (
        select coalesce(array_agg(a.tenant_id), '{}')
        from memory.tenant_admins as a
        where a.user_id = (select auth.uid())
    );
end
$$;

revoke all on function memory_private.administered_tenants() from public, anon, authenticated, service_role;
grant execute on function memory_private.administered_tenants() to authenticated, service_role;
