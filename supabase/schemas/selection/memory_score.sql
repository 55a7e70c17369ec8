-- Why: seed 004's memory score in one place, for selection and the cap: (type weight x confidence x
-- recency) + 0.1 x reference count, recency = 1 / (1 + days since last reference), days capped at
-- 30. No `set search_path`, so the planner inlines it into the ranking queries (a SET clause stops
-- that); it names only built-in arithmetic and runs with the caller's rights.
create function memory_private.memory_score(
    p_weight numeric, p_confidence numeric, p_last_referenced_at timestamptz, p_created_at timestamptz,
    p_reference_count integer, p_now timestamptz
)
returns numeric
language sql
immutable
parallel safe
as $$
    select p_weight * p_confidence
        / (1 + least(30, greatest(0, extract(epoch from p_now - coalesce(p_last_referenced_at, p_created_at)) / 86400)))
        + 0.1 * p_reference_count
$$;

revoke all on function memory_private.memory_score(
    numeric, numeric, timestamp with time zone, timestamp with time zone, integer, timestamp with time
    zone
) from public, anon, authenticated, service_role;
grant execute on function memory_private.memory_score(
    numeric, numeric, timestamp with time zone, timestamp with time zone, integer, timestamp with time
    zone
) to authenticated, service_role;
