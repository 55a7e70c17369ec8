-- Why: the settings of a user the caller may not write are not found (P0002), never a row of
-- nulls that reads as "memory on, not opted in".
create function memory.set_memory_settings(
    p_memory_paused boolean default null, p_long_term_opt_in boolean default null, p_user_id uuid default null
)
returns memory.users
language plpgsql
set search_path = ''
as $$
declare
    -- Resolved once: in the update's condition it ran for every user row.
    v_user uuid := memory_private.writing_user(p_user_id);
    v_row memory.users;
begin
    update memory.users as u
    set memory_paused = coalesce(p_memory_paused, u.memory_paused),
        long_term_opt_in = coalesce(p_long_term_opt_in, u.long_term_opt_in)
    where u.id = v_user
    returning u.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'user not found';
    end if;
    return v_row;
end
$$;

revoke all on function memory.set_memory_settings(boolean, boolean, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.set_memory_settings(boolean, boolean, uuid) to authenticated, service_role;
