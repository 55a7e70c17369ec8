-- Why: an archived memory (made room for by the cap, or old and unreferenced) can come back, but
-- only as the cap allows: it counts against the cap like a new memory, and when the profile is
-- full the lowest-scored unpinned live memory is archived in its place, which may be this one
-- again (the returned row says so; pin it first to keep it). Signed-in users cannot unarchive by a
-- direct update, which would ignore the cap; this is the way that keeps it.
create function memory_private.unarchive_memory(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m set archived = false
    where m.id = p_memory_id and m.archived and m.deleted_at is null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'no archived memory with that id',
            hint = 'A deleted memory is brought back with restore_memory.';
    end if;
    perform memory_private.enforce_memory_cap(v_row.user_id, v_row.profile_id);
    select m.* into v_row from memory.memories as m where m.id = p_memory_id;
    return v_row;
end
$$;

revoke all on function memory_private.unarchive_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.unarchive_memory(uuid, uuid) to authenticated, service_role;

create function memory.unarchive_memory(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.unarchive_memory(p_memory_id, p_user_id);
end
$$;

revoke all on function memory.unarchive_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.unarchive_memory(uuid, uuid) to authenticated, service_role;
