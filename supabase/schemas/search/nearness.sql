-- Why: how near a neighbour is among a list of them, from the farthest (0) to the nearest (1); a
-- list of one, or of equal distances, is all 1. A cosine's range depends on the model (e5's
-- neighbours all sit near 0.8), so fusion and the selection's lift scale it over the list they
-- have. No `set search_path`: a SET clause stops the planner inlining it; it is immutable
-- arithmetic on its arguments, run with the caller's rights.
create function memory_private.nearness(
    p_distance double precision, p_nearest double precision, p_farthest double precision
)
returns double precision
language sql
immutable
parallel safe
as $$
    select coalesce((p_farthest - p_distance) / nullif(p_farthest - p_nearest, 0), 1)
$$;

revoke all on function memory_private.nearness(double precision, double precision, double precision)
from public, anon, authenticated, service_role;
grant execute on function memory_private.nearness(double precision, double precision, double precision)
to authenticated, service_role;
