-- Why: the soft delete behind seed 004's "This was saved" toast with Undo: deleted_at is set and
-- the row stays, so restore_memory undoes it exactly until the purge. No API role writes memories
-- directly, so an invoker wrapper calls a security definer body that memory_scope limits.
create function memory.forget(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.forget(p_memory_id, p_user_id);
end
$$;

revoke all on function memory.forget(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.forget(uuid, uuid) to authenticated, service_role;

-- Why: memory.forget's body, run as the owner: the soft delete behind seed 004's
-- "Undo"; the row stays until the purge.
create function memory_private.forget(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m set deleted_at = now(), active = false
    where m.id = p_memory_id and m.deleted_at is null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found or already deleted';
    end if;
    return v_row;
end
$$;

revoke all on function memory_private.forget(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.forget(uuid, uuid) to authenticated, service_role;
