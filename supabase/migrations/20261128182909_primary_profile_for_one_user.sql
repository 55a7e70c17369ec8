-- memory.set_primary_profile takes the user the service role acts for: a profile of anyone else
-- is not found, in SQL rather than in each caller.
drop function if exists memory.set_primary_profile(p_profile_id uuid);

set check_function_bodies = off;

create or replace function memory.set_primary_profile(p_profile_id uuid, p_user_id uuid default null::uuid)
returns memory.profiles
language plpgsql
set search_path to ''
as $function$
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
$function$;


revoke all on function memory.set_primary_profile(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.set_primary_profile(uuid, uuid) to authenticated, service_role;
