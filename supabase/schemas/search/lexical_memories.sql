-- Why: BM25 over one user's live memories (not deleted, not expired), best first, for the Settings
-- keyword search and for message search. Memories are few per user (at most memory_cap live per
-- profile), so the corpus size, lengths and term frequencies are counted at query time. Its one
-- statement is planned once per session (plpgsql, generic plan): planning it took longer than
-- running it.
create function memory_private.lexical_memories(p_user_id uuid, p_query text, p_limit integer default 50)
returns table (memory_id uuid, score double precision)
language plpgsql
stable
rows 50
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
    return query
    with terms as (
        select memory_private.query_terms(p_query) as terms
    ),
    corpus as (
        select mm.id, mm.search, mm.source_message_id
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null
            and (mm.expires_at is null or mm.expires_at > now())
    ),
    sizes as (
        select greatest(count(*), 1)::double precision as documents,
            coalesce(avg(length(c.search)), 1)::double precision as average
        from corpus as c
    ),
    matches as (
        select c.id, c.search from corpus as c, terms
        where cardinality(terms.terms) > 0 and c.search @@ memory_private.any_term(terms.terms)
    ),
    frequencies as materialized (
        select w.lexeme as term, count(*)::double precision as df
        from matches as x
        cross join terms
        cross join lateral unnest(
            pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(x.search, 'D'), 'A', terms.terms), '{a}')
        ) as w (lexeme, positions, weights)
        group by w.lexeme
    )
    select x.id, sum(memory_private.bm25(cardinality(w.positions), length(x.search), s.average, f.df, s.documents))
    from matches as x
    cross join terms
    cross join lateral unnest(
        pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(x.search, 'D'), 'A', terms.terms), '{a}')
    ) as w (lexeme, positions, weights)
    join frequencies as f on f.term = w.lexeme
    cross join sizes as s
    group by x.id
    order by 2 desc, x.id
    limit p_limit;
end
$$;

revoke all on function memory_private.lexical_memories(uuid, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_memories(uuid, text, integer) to authenticated, service_role;
