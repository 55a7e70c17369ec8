-- Why: search runs as the owner after one check that the caller may read every message of the
-- user (memory.search_messages), instead of the per-row policy on each candidate: under that OR
-- policy the planner read all of a signed-in user's messages to find a handful. True for the user,
-- an admin of the user's tenant, and trusted callers (the service role, or the owner: migrations,
-- pg_cron), as the messages policy lets each read the user's messages. A participant in one of
-- the user's conversations reads only that one, so is not one of them.
create function memory_private.reads_user_messages(p_user_id uuid)
returns boolean
language plpgsql
stable
set search_path = ''
as $$
declare
    v_uid uuid := (select auth.uid());
begin
    if v_uid is null then
        return pg_has_role(coalesce(nullif(current_setting('role'), 'none'), session_user), 'service_role', 'usage');
    end if;
    return v_uid = p_user_id or exists (
        select 1 from memory.users as u
        where u.id = p_user_id and u.tenant_id = any(memory_private.administered_tenants())
    );
end
$$;

revoke all on function memory_private.reads_user_messages(uuid) from public, anon, authenticated, service_role;
