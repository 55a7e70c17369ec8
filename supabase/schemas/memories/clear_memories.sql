-- Why: seed 004's Settings "Clear all memories (with confirmation)": one call soft-deletes every
-- memory of the user (or of one profile) not deleted yet. Each goes through memory.forget, so each
-- gets its history event, obeys the same rights and can be restored until the purge; the
-- confirmation belongs to the UI, the database's guarantee is the undo.
create function memory.clear_memories(p_user_id uuid default null, p_profile_id uuid default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_count integer;
begin
    -- Locked first, so a memory deleted concurrently drops out instead of failing the call.
    with doomed as (
        select m.id
        from memory.memories as m
        where m.user_id = v_user and m.deleted_at is null and (p_profile_id is null or m.profile_id = p_profile_id)
        for update of m
    ),
    cleared as (
        select memory.forget(d.id, v_user) from doomed as d
    )
    select count(*)::integer into v_count from cleared;
    return v_count;
end
$$;

revoke all on function memory.clear_memories(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.clear_memories(uuid, uuid) to authenticated, service_role;
