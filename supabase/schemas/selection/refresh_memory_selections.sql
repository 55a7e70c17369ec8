-- Why: builds a profile's selection (memory_selections) from one scan of its live memories: every
-- pinned one and the best 2 x memory_select_limit by score now, the bound being the best left out
-- (its score and id). It also works out when the candidates stop proving a selection of
-- memory_select_limit: when fewer of them than the limit's unpinned places still score above the
-- bound (a score is a / (1 + days) + b, days capped at 30, so each falls to the bound at a known
-- time) or the first of them expires. Its notes are taken with the scan. The caller holds the
-- selection's row lock.
create function memory_private.refresh_memory_selection(p_profile_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_limit integer := (memory_private.setting('memory_select_limit'))::integer;
    v_candidates uuid [];
    v_bound numeric;
    v_bound_id uuid;
    v_pins integer;
    v_expires timestamptz;
    v_stale timestamptz;
begin
    -- The notes go in the statement that scans the memories: the ones it cannot see (a write not yet
    -- committed) stay, and name what this scan missed.
    with taken as (
        delete from memory_private.memory_selection_notes as n where n.profile_id = p_profile_id
    )
    select coalesce(array_agg(r.id) filter (where r.chosen), '{}'),
        (array_agg(r.score order by r.score desc, r.id) filter (where not r.chosen))[1],
        (array_agg(r.id order by r.score desc, r.id) filter (where not r.chosen))[1],
        count(*) filter (where r.pinned), min(r.expires_at) filter (where r.chosen)
    into v_candidates, v_bound, v_bound_id, v_pins, v_expires
    from (
        select l.*, l.pinned or row_number() over (partition by l.pinned order by l.score desc, l.id) <= 2 * v_limit
            as chosen
        from (
            select m.id, m.pinned, m.expires_at,
                memory_private.memory_score(
                    t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
                ) as score
            from memory.memories as m
            join memory.memory_types as t on t.type = m.type
            where m.profile_id = p_profile_id and m.active and not m.archived and m.deleted_at is null
                and (m.expires_at is null or m.expires_at > now())
        ) as l
    ) as r;
    if v_bound is not null and v_limit > v_pins then
        -- When the (limit - pins)-th latest of the unpinned candidates falls to the bound.
        select f.falls into v_stale
        from (
            select case
                when c.a / 31 + c.b > v_bound then 'infinity'
                when c.a = 0 or c.b >= v_bound then c.since
                else c.since + make_interval(secs => ((c.a / (v_bound - c.b) - 1) * 86400)::float8)
            end as falls
            from (
                select t.weight * m.confidence as a, 0.1 * m.reference_count as b,
                    coalesce(m.last_referenced_at, m.created_at) as since
                from memory.memories as m
                join memory.memory_types as t on t.type = m.type
                where m.id = any(v_candidates) and not m.pinned
            ) as c
        ) as f
        order by f.falls desc
        offset v_limit - v_pins - 1 limit 1;
    end if;
    update memory_private.memory_selections as s
    set candidates = v_candidates, bound = v_bound, bound_id = v_bound_id,
        stale_at = least(coalesce(v_stale, 'infinity'), v_expires)
    where s.profile_id = p_profile_id;
end
$$;

revoke all on function memory_private.refresh_memory_selection(uuid) from public, anon, authenticated, service_role;

-- Why: the scheduled refresh: up to p_limit selections due now (by time, by a candidate's fall, or
-- by their notes' number), the most overdue first; one another refresh holds is left to it.
create function memory_private.refresh_memory_selections(p_limit integer default 200)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_limit integer := (memory_private.setting('memory_select_limit'))::integer;
    v_profile uuid;
    v_count integer := 0;
begin
    if p_limit is null or p_limit < 1 then
        raise exception using errcode = '22023', message = 'limit must be positive';
    end if;
    for v_profile in
        select s.profile_id from memory_private.memory_selections as s
        where s.stale_at <= now() or s.profile_id in (
            -- A candidate left or fell, or the noted memories outnumber the candidates a build keeps.
            select n.profile_id from memory_private.memory_selection_notes as n
            group by n.profile_id
            having bool_or(n.memory_id is null) or count(*) > 2 * v_limit
        )
        order by s.stale_at
        limit p_limit
        for update of s skip locked
    loop
        perform memory_private.refresh_memory_selection(v_profile);
        v_count := v_count + 1;
    end loop;
    return v_count;
end
$$;

revoke all on function memory_private.refresh_memory_selections(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.refresh_memory_selections(integer) to service_role;
