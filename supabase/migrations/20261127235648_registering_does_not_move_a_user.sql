-- Registering a user already in another tenant into a tenant is refused with 55000, where it was
-- ignored and the caller took the user for one of the tenant it named; a user of no tenant is placed
-- in the one named, as memory.users allows.
set check_function_bodies = off;

create or replace function memory.register_user(p_user_id uuid default null::uuid, p_tenant_id uuid default null::uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_id uuid := memory_private.acting_user(p_user_id);
begin
    -- Two statements: a signed-in user may insert only id and auth_user_id (column grants).
    if p_tenant_id is null then
        insert into memory.users (id, auth_user_id) values (v_id, v_id) on conflict do nothing;
    else
        insert into memory.users (id, auth_user_id, tenant_id) values (v_id, v_id, p_tenant_id) on conflict do nothing;
        if not found then
            update memory.users as u set tenant_id = p_tenant_id where u.id = v_id and u.tenant_id is null;
            if exists (select 1 from memory.users as u where u.id = v_id and u.tenant_id <> p_tenant_id) then
                raise exception using errcode = '55000',
                    message = format('user %s is registered in another tenant', v_id),
                    hint = 'A user''s tenant cannot change: export their memories, erase the user, and import '
                    || 'them for a user of the new tenant.';
            end if;
        end if;
    end if;
    return v_id;
end
$function$;


revoke all on function memory.register_user(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.register_user(uuid, uuid) to authenticated, service_role;
