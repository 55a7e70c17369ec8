-- Why: a Supabase Auth user needs its `memory.users` row before its first conversation. Signed-in
-- users register only themselves and never pick a tenant; service_role may place them in one. Any
-- conflict means the user is already there, so two concurrent first requests both succeed. A user
-- already there in another tenant, or in none, stays where they are and the call says so (55000),
-- where it was ignored and the caller took the user for one of the tenant it named: placing a
-- user of no tenant would leave the rows they own outside it (their tenant is copied at insert).
create function memory.register_user(p_user_id uuid default null, p_tenant_id uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid := memory_private.acting_user(p_user_id);
begin
    -- What the foreign keys would refuse naming only themselves, for the service role, who alone may
    -- register another and choose a tenant (anyone else meets the grants): a tenant or a Supabase
    -- Auth user that is not there.
    if (select auth.uid()) is distinct from v_id and memory_private.trusted_caller() then
        perform memory_private.check_tenant(p_tenant_id);
        -- Statements of their own: only the service role may execute the lookup.
        if not exists (select 1 from memory.users as u where u.id = v_id) then
            if not memory_private.auth_user_exists(v_id) then
                raise exception using errcode = '23503', message = format('no Supabase Auth user %s', v_id),
                    hint = 'Register Supabase Auth users by their id; resolve an app''s own ids with '
                    || 'memory.user_id_for.';
            end if;
        end if;
    end if;
    -- Two statements: a signed-in user may insert only id and auth_user_id (column grants).
    if p_tenant_id is null then
        insert into memory.users (id, auth_user_id) values (v_id, v_id) on conflict do nothing;
    else
        insert into memory.users (id, auth_user_id, tenant_id) values (v_id, v_id, p_tenant_id) on conflict do nothing;
        if not found and exists (
            select 1 from memory.users as u where u.id = v_id and u.tenant_id is distinct from p_tenant_id
        ) then
            raise exception using errcode = '55000',
                message = format('user %s is registered in another tenant or in none', v_id),
                hint = 'Registering does not move a user: export their memories, erase the user, and import '
                || 'them for a user of the tenant.';
        end if;
    end if;
    return v_id;
end
$$;

revoke all on function memory.register_user(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.register_user(uuid, uuid) to authenticated, service_role;
