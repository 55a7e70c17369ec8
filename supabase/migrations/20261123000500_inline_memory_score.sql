-- Seed 004's memory score, inlined into the queries that rank memories.
--
-- Why: selection and the cap score every live memory of a profile. memory_score carried
-- `set search_path = ''`, and Postgres never inlines a function with a SET clause: each row paid a
-- separate SQL-function call with a search_path switch around it (about 13 ms for 1,000 memories,
-- against well under 1 ms inlined). Without the SET clause the planner substitutes the formula into
-- the calling query, so the formula still lives in one place and costs what the arithmetic costs.
--
-- Leaving search_path unpinned is safe here, and is the one exemption in
-- supabase/tests/schema/functions_set_search_path.test.sql: the body names no table, function or
-- type of its own, only built-in arithmetic; it runs with the caller's rights (never security
-- definer); and it is inlined into callers that pin search_path to '' themselves, so its operators
-- resolve in pg_catalog there. A caller who changes their own search_path only affects their own call.
create or replace function memory_private.memory_score(
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

revoke execute on all routines in schema memory, memory_private from public;
