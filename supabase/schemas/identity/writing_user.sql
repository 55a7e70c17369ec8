-- Why: a signed-in user's first write (a conversation, a value) must not fail for want of a
-- `memory.users` row; every writing RPC resolves its user through here.
create function memory_private.writing_user(p_user_id uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    if (select auth.uid()) = v_user then
        perform memory.register_user(v_user);
    end if;
    return v_user;
end
$$;

revoke all on function memory_private.writing_user(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.writing_user(uuid) to authenticated, service_role;
