-- Why: seed 004's cap of memory_cap live memories per user and profile. Making room archives the
-- lowest-scored unpinned memories, never deletes them; a write that would leave more pinned
-- memories than the cap is refused (54000). Scores only when over the cap. Runs as the owner to
-- archive rows no API role may update; a signed-in caller affects only their own profiles.
create function memory_private.enforce_memory_cap(p_user_id uuid, p_profile_id uuid)
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
            and (m.expires_at is null or m.expires_at > now())
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
            and (m.expires_at is null or m.expires_at > now())
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
    -- Pinned memories are never archived to make room, so a write that would leave more pinned
    -- memories than the cap is refused (the whole write rolls back).
    if (
        select count(*) from memory.memories as m
        where m.user_id = p_user_id and m.profile_id = p_profile_id
            and m.active and not m.archived and m.deleted_at is null
            and (m.expires_at is null or m.expires_at > now())
    ) > v_cap then
        raise exception using
            errcode = '54000',
            message = 'memory cap reached: every live memory is pinned',
            detail = format('at most %s live memories per user and profile', v_cap),
            hint = 'Unpin or delete a memory first.';
    end if;
    return v_archived;
end
$$;

revoke all on function memory_private.enforce_memory_cap(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.enforce_memory_cap(uuid, uuid) to authenticated, service_role;
