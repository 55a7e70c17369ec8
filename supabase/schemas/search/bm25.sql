-- Why: one query term's BM25 contribution (k1 = 1.2, b = 0.75; Lucene's idf, never negative), so a
-- rare word ("marathon") outweighs a common one ("went"). No `set search_path`: a SET clause stops
-- the planner inlining it, and lexical search calls it per candidate and term. It names only
-- pg_catalog's ln and is immutable arithmetic run with the caller's rights.
create function memory_private.bm25(
    p_tf double precision, p_length double precision, p_average_length double precision,
    p_df double precision, p_documents double precision
)
returns double precision
language sql
immutable
parallel safe
as $$
    select pg_catalog.ln(1 + (p_documents - p_df + 0.5) / (p_df + 0.5))
        * p_tf * 2.2 / (p_tf + 1.2 * (0.25 + 0.75 * p_length / greatest(p_average_length, 1)))
$$;

revoke all on function memory_private.bm25(
    double precision, double precision, double precision, double precision, double precision
) from public, anon, authenticated, service_role;
grant execute on function memory_private.bm25(
    double precision, double precision, double precision, double precision, double precision
) to authenticated, service_role;
