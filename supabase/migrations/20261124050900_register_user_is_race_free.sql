-- Two first requests of the same new user, at once, both register them: the second waited on
-- the first's insert and then failed on the auth_user_id key (23505), because the conflict
-- clause named only the id. Any conflict now means the user is there.
create or replace function memory.register_user(p_user_id uuid default null, p_tenant_id uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid := memory_private.acting_user(p_user_id);
begin
    -- Two statements: a signed-in user may insert only id and auth_user_id (column grants).
    if p_tenant_id is null then
        insert into memory.users (id, auth_user_id) values (v_id, v_id) on conflict do nothing;
    else
        insert into memory.users (id, auth_user_id, tenant_id) values (v_id, v_id, p_tenant_id) on conflict do nothing;
    end if;
    return v_id;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
