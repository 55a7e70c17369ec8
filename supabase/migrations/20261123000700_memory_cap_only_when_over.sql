-- The cap scores a profile's memories only when the profile is over it.
--
-- Why: remember and restore_memory call enforce_memory_cap after every insert, and it scored and
-- sorted every live memory of the profile even when there was nothing to archive, which is the
-- common case (a profile below memory_cap). Counting the live memories first (through
-- memories_live_idx) leaves the scoring to the inserts that do push a profile past the cap.
-- Behaviour is that of 20261122000800: the lowest-scored unpinned memories are archived, never deleted.
create or replace function memory_private.enforce_memory_cap(p_user_id uuid, p_profile_id uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_cap integer := (memory_private.setting('memory_cap'))::integer;
    v_archived integer;
begin
    if (select auth.uid()) is not null and p_user_id is distinct from (select auth.uid()) then
        return 0;
    end if;
    if (
        select count(*) from memory.memories as m
        where m.user_id = p_user_id and m.profile_id = p_profile_id
            and m.active and not m.archived and m.deleted_at is null
    ) <= v_cap then
        return 0;
    end if;
    with live as (
        select m.id, m.pinned,
            memory_private.memory_score(
                t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
            ) as score
        from memory.memories as m
        join memory.memory_types as t on t.type = m.type
        where m.user_id = p_user_id and m.profile_id = p_profile_id
            and m.active and not m.archived and m.deleted_at is null
    ),
    excess as (
        select l.id from live as l
        where not l.pinned
        order by l.score asc, l.id
        limit greatest(0, (select count(*) from live) - v_cap)
    )
    update memory.memories as m set archived = true
    from excess where m.id = excess.id;
    get diagnostics v_archived = row_count;
    return v_archived;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
