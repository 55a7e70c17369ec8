-- Why: lexical search called memory_private.bm25 once per (candidate message, query term) as a
-- separate SQL function execution, because a function with a SET clause is never inlined: about
-- 3 ms of a 4 ms search over 400 turns. Like memory_score (20261123000500), it goes without the
-- clause so the planner inlines it into lexical_messages and lexical_memories, which pin
-- search_path themselves; it names no object but pg_catalog's ln and stays immutable arithmetic
-- with invoker's rights (supabase/tests/schema/functions_set_search_path.test.sql holds it to that).
create or replace function memory_private.bm25(
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
