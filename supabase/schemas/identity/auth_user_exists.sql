-- Why: whether a Supabase Auth user is there, for register_user's service-role path: auth.users
-- is GoTrue's, unreadable to the service role. A yes or no about an id, for the service role only.
create function memory_private.auth_user_exists(p_user_id uuid)
returns boolean
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return exists (select 1 from auth.users as u where u.id = p_user_id);
end
$$;

revoke all on function memory_private.auth_user_exists(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.auth_user_exists(uuid) to service_role;
