-- Why: policies and RPCs accept `p_user_id` for service_role callers and default to the signed-in
-- user; a call with neither would silently match nothing, so it is an error instead.
create function memory_private.acting_user(p_user_id uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := coalesce(p_user_id, auth.uid());
begin
    if v_user is null then
        raise exception using
            errcode = '22023',
            message = 'user id required',
            hint = 'Pass p_user_id, or call as a signed-in user.';
    end if;
    return v_user;
end
$$;

revoke all on function memory_private.acting_user(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.acting_user(uuid) to authenticated, service_role;
