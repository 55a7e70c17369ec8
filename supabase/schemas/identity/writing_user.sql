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
    -- The service role writing for a user nobody registered would meet a foreign key naming only
    -- itself; the service role reads every user, so the answer is sure (others are left to RLS).
    elsif memory_private.trusted_caller() and not exists (select 1 from memory.users as u where u.id = v_user) then
        raise exception using errcode = 'P0002', message = 'user not found',
            detail = format('No user %s is registered.', v_user),
            hint = 'Register the user first (memory.register_user), or resolve an app''s id with memory.user_id_for.';
    end if;
    return v_user;
end
$$;

revoke all on function memory_private.writing_user(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.writing_user(uuid) to authenticated, service_role;
