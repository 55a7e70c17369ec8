-- Seed 004's Settings: "Clear all memories (with confirmation)". One call soft-deletes every
-- memory of the user (or of one profile) that is not deleted yet: active, archived and superseded
-- alike. Each goes through memory.forget, so each gets its 'delete' event in the history, obeys
-- the same rights, and can be brought back with memory.restore_memory until the purge.

-- Why: a user who wants a clean slate should not have to delete a thousand memories one by one,
-- and the confirmation the UI asks for belongs to the UI: the database's guarantee is the undo.
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
grant execute on function memory.clear_memories(uuid, uuid) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
