-- A UUID names the user with that id in the tenant, whoever made the user (Supabase Auth or
-- memory.user_id_for), and without a tenant any Auth user, so every client resolves an id the one
-- way memory.find_user_id does.
set check_function_bodies = off;

create or replace function memory.find_user_id(p_external_id text, p_tenant_id uuid default null::uuid)
returns uuid
language sql
stable
set search_path to ''
as $function$
    select u.id
    from memory.users as u
    where (
        u.id = case
            when p_external_id ~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$' then p_external_id::uuid
        end
        and (u.tenant_id is not distinct from p_tenant_id or p_tenant_id is null and u.auth_user_id is not null)
    )
    or (u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id)
    -- The user the UUID names before one whose external id is that text.
    order by u.external_id is not distinct from p_external_id
    limit 1
$function$;
