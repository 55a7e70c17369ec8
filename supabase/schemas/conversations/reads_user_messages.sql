-- Why: search runs as the owner after one check that the caller may read the user's messages
-- (memory.search_messages), instead of the per-row policy on each candidate: under that OR policy
-- the planner read all of a signed-in user's messages to find a handful. True for the user, an
-- admin of the user's tenant and trusted callers. An admin still reads only the messages of the
-- tenants they administer (a user moved into a tenant keeps older messages outside it), which the
-- search's page read holds to; a participant in one of the user's conversations is not one of them.
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
        return memory_private.trusted_caller();
    end if;
    return v_uid = p_user_id or exists (
        select 1 from memory.users as u
        where u.id = p_user_id and u.tenant_id = any(memory_private.administered_tenants())
    );
end
$$;

revoke all on function memory_private.reads_user_messages(uuid) from public, anon, authenticated, service_role;
