-- find_user_id cast its text to uuid in a condition that Postgres may evaluate before the regular
-- expression guarding it (it does when the plan uses users_pkey), so a text id that is not a UUID
-- raised 22P02 instead of finding nobody. The cast now sits inside the CASE that guards it.
create or replace function memory.find_user_id(p_external_id text, p_tenant_id uuid default null)
returns uuid
language sql
stable
set search_path = ''
as $$
    select u.id
    from memory.users as u
    where (
        p_tenant_id is null
        and u.id = case
            when p_external_id ~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$' then p_external_id::uuid
        end
        and u.auth_user_id is not null
    )
    or (u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id)
    order by (u.external_id is null) desc
    limit 1
$$;

revoke execute on all routines in schema memory, memory_private from public;
