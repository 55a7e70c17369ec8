-- Why: keeps memory_selections' promise through every write to memories. A live memory that could
-- now outscore its profile's bound (new, restored, moved, pinned, reinforced, more confident, of
-- another type) joins the candidates; a candidate that leaves, moves, is unpinned or scores less
-- marks the selection for the next refresh, which may need another. One pass per statement. The
-- selections' row locks order it with a refresh, which then sees the memories this statement wrote.
create function memory_private.memory_selection_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_new memory.memories [] := '{}';
    v_old memory.memories [] := '{}';
begin
    if tg_op <> 'DELETE' then
        v_new := array(select n from new_memories as n where n.profile_id is not null);
    end if;
    if tg_op <> 'INSERT' then
        v_old := array(select o from old_memories as o where o.profile_id is not null);
    end if;
    perform 1 from memory_private.memory_selections as s
    where s.profile_id in (select x.profile_id from unnest(v_new || v_old) as x)
    order by s.profile_id
    for update;
    with standing as (
        select x.side, x.id, x.profile_id, x.pinned,
            x.active and not x.archived and x.deleted_at is null and (x.expires_at is null or x.expires_at > now())
            as live,
            memory_private.memory_score(
                t.weight, x.confidence, x.last_referenced_at, x.created_at, x.reference_count, now()
            ) as score
        from (
            select 'new' as side, n.* from unnest(v_new) as n
            union all
            select 'old' as side, o.* from unnest(v_old) as o
        ) as x
        join memory.memory_types as t on t.type = x.type
    ),
    paired as (
        select n.id as new_id, n.profile_id as new_profile, n.live as new_live, n.pinned as new_pinned,
            n.score as new_score, o.id as old_id, o.profile_id as old_profile, o.live as old_live,
            o.pinned as old_pinned, o.score as old_score
        from (select * from standing where side = 'new') as n
        full join (select * from standing where side = 'old') as o on o.id = n.id
    ),
    changes as (
        select p.new_profile as profile_id, p.new_id as added, false as stale
        from paired as p
        join memory_private.memory_selections as s on s.profile_id = p.new_profile
        where p.new_live and not p.new_id = any(s.candidates)
            and (s.bound is null or p.new_pinned or p.new_score > s.bound
                or (p.new_score = s.bound and p.new_id < s.bound_id))
        union all
        select p.old_profile, null, true
        from paired as p
        join memory_private.memory_selections as s on s.profile_id = p.old_profile
        where p.old_live and p.old_id = any(s.candidates) and s.bound is not null
            and (p.new_id is null or not p.new_live or p.new_profile is distinct from p.old_profile
                or (p.old_pinned and not p.new_pinned) or p.new_score < p.old_score)
    )
    update memory_private.memory_selections as s
    set candidates = s.candidates || c.added,
        -- A selection of all live memories is trimmed to its best by the next refresh.
        stale_at = case when c.stale or s.bound is null then least(s.stale_at, now()) else s.stale_at end
    from (
        select c.profile_id, coalesce(array_agg(c.added) filter (where c.added is not null), '{}') as added,
            bool_or(c.stale) as stale
        from changes as c
        group by c.profile_id
    ) as c
    where s.profile_id = c.profile_id;
    return null;
end
$$;

revoke all on function memory_private.memory_selection_changed() from public, anon, authenticated, service_role;

create trigger memories_selection_inserted
after insert on memory.memories
referencing new table as new_memories
for each statement execute function memory_private.memory_selection_changed();

create trigger memories_selection_updated
after update on memory.memories
referencing old table as old_memories new table as new_memories
for each statement execute function memory_private.memory_selection_changed();

create trigger memories_selection_deleted
after delete on memory.memories
referencing old table as old_memories
for each statement execute function memory_private.memory_selection_changed();

-- Why: a heavier type can lift any memory above its profile's bound, so a weight change leaves
-- every built selection unproven until it is built again.
create function memory_private.memory_type_weight_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    update memory_private.memory_selections as s
    set bound = 'Infinity', bound_id = null, stale_at = least(s.stale_at, now())
    where s.bound is not null and s.bound <> 'Infinity';
    return null;
end
$$;

revoke all on function memory_private.memory_type_weight_changed() from public, anon, authenticated, service_role;

create trigger memory_types_weight_changed
after update of weight on memory.memory_types
for each statement execute function memory_private.memory_type_weight_changed();
