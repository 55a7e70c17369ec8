-- Why: a caller that holds only a profile id (seed 004's backfill, `supamem backfill --run`) needs
-- its user, e.g. to run only that user's jobs, and over the Data API a service caller has RPCs
-- only. Reads under the caller's RLS: a profile they cannot see has no user.
create function memory.profile_user_id(p_profile_id uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
        select p.user_id from memory.profiles as p where p.id = p_profile_id
    );
end
$$;

revoke all on function memory.profile_user_id(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.profile_user_id(uuid) to authenticated, service_role;
