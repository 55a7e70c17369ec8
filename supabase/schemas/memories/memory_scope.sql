-- Why: the memory writers run as the owner, so RLS does not guard them; this is the one place that
-- says whose memories the caller may change. Returns the signed-in user's id, or null for a trusted
-- caller (the service role, or the owner: migrations, pg_cron) who names a user with p_user_id;
-- anyone else is refused (42501). Called only inside security definer bodies, so granted to nobody.
create function memory_private.memory_scope()
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
    v_uid uuid := (select auth.uid());
    v_role text := coalesce(nullif(current_setting('role'), 'none'), session_user);
begin
    if v_uid is not null then
        return v_uid;
    end if;
    if not pg_has_role(v_role, 'service_role', 'usage') then
        raise exception using errcode = '42501', message = 'memories are changed by a signed-in user or the service role',
            detail = format('role %s has no user id', v_role);
    end if;
    return null;
end
$$;

revoke all on function memory_private.memory_scope() from public, anon, authenticated, service_role;
