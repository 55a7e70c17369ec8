-- Why: reads name people by the app's ids but must never create a user, and every client asks the
-- same question: which user does this id name? A UUID names the user with that id in the tenant
-- (an Auth user, or one user_id_for made), and without a tenant any Auth user (their id is global);
-- any other text is an external id in the tenant.
create function memory.find_user_id(p_external_id text, p_tenant_id uuid default null)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
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
    );
end
$$;

revoke all on function memory.find_user_id(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.find_user_id(text, uuid) to service_role;
