-- Why: the undo of forget (seed 004's "This was saved" toast with Undo): a soft-deleted memory
-- comes back until the purge, counting against the cap like a new one. A memory superseded since
-- it last stood current comes back inactive, so an old version never stands active next to its newer one.
create function memory.restore_memory(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.restore_memory(p_memory_id, p_user_id);
end
$$;

revoke all on function memory.restore_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.restore_memory(uuid, uuid) to authenticated, service_role;

-- Why: memory.restore_memory's body, run as the owner: the undo. A memory superseded since it last
-- stood as the current version (an undone update reinstates it) comes back inactive even when its
-- successor has been purged meanwhile (the purge clears superseded_by), so an old version never
-- becomes active next to a newer one; and the restored memory counts against the cap like a new one.
create function memory_private.restore_memory(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m
    set deleted_at = null,
        active = m.superseded_by is null and not exists (
            select 1 from memory.memory_events as e
            where e.memory_id = m.id and e.event = 'supersede' and e.id > coalesce((
                select max(r.id) from memory.memory_events as r where r.memory_id = m.id and r.event = 'reinstate'
            ), 0)
        )
    where m.id = p_memory_id and m.deleted_at is not null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'no deleted memory with that id';
    end if;
    perform memory_private.enforce_memory_cap(v_row.user_id, v_row.profile_id);
    select m.* into v_row from memory.memories as m where m.id = p_memory_id;
    return v_row;
end
$$;

revoke all on function memory_private.restore_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.restore_memory(uuid, uuid) to authenticated, service_role;
