-- Why: tenant admin policies filter on `tenant_id`, which must always equal the owner's tenant.
-- Clients never choose it; this trigger copies it from the user on every insert and owner change.
create function memory_private.inherit_tenant()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    return new;
end
$$;

revoke all on function memory_private.inherit_tenant() from public, anon, authenticated, service_role;
