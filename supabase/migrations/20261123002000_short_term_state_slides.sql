-- Seed 001: short-term state "expires after 5 minutes of inactivity". Reading it is activity: the
-- user is answering the pending question. A read by the state's own user (or by service_role
-- acting for them) now moves expires_at forward by the state's lifetime (expires_at - updated_at,
-- as short_term_set wrote them), so a conversation that keeps going keeps its state. A tenant
-- admin's read is not the user's activity and moves nothing (RLS lets admins read, not update).
create or replace function memory.short_term_get(p_key text, p_user_id uuid default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_value jsonb;
begin
    update memory.short_term_state as s
    set expires_at = now() + (s.expires_at - s.updated_at), updated_at = now()
    where s.user_id = v_user and s.key = p_key and s.expires_at > now()
    returning s.value into v_value;
    if found then
        return v_value;
    end if;
    return (
        select s.value from memory.short_term_state as s
        where s.user_id = v_user and s.key = p_key and s.expires_at > now()
    );
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
