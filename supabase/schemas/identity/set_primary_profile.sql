-- Why: the primary profile must move in one step; the partial unique index would reject a second
-- primary, so the old one is cleared first inside the same transaction. With p_user_id (the
-- service role acting for one user) a profile of anyone else is not found.
create function memory.set_primary_profile(p_profile_id uuid, p_user_id uuid default null)
returns memory.profiles
language plpgsql
set search_path = ''
as $$
declare
    v_profile memory.profiles;
begin
    select p.* into v_profile from memory.profiles as p
    where p.id = p_profile_id and (p_user_id is null or p.user_id = p_user_id)
    for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    update memory.profiles as p set is_primary = false
    where p.user_id = v_profile.user_id and p.is_primary and p.id <> p_profile_id;
    update memory.profiles as p set is_primary = true where p.id = p_profile_id
    returning p.* into v_profile;
    return v_profile;
end
$$;

revoke all on function memory.set_primary_profile(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.set_primary_profile(uuid, uuid) to authenticated, service_role;
