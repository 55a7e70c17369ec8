-- Why: a user's rows carry their tenant (tenant admins read by it); moving a user would leave
-- every row they own readable by the old tenant's admin. A move is an export and an import.
-- Placing a user who has no tenant yet moves nothing out of anyone's sight, so it stays allowed.
create function memory_private.users_keep_their_tenant()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    raise exception using
        errcode = '55000',
        message = 'a user''s tenant cannot change',
        hint = 'Export the user''s memories, erase the user, and import them for a user of the new tenant.';
end
$$;

create trigger users_keep_their_tenant
before update of tenant_id on memory.users
for each row when (old.tenant_id is not null and old.tenant_id is distinct from new.tenant_id)
execute function memory_private.users_keep_their_tenant();

revoke all on function memory_private.users_keep_their_tenant() from public, anon, authenticated, service_role;
