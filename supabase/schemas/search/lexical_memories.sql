-- Why: BM25 over one user's memories (not deleted, not expired), best first, for the Settings
-- keyword search and message search, or, given a profile, over its live memories, for the query's
-- lift in memory selection (memory_private.memory_corpus). Memories are few per user (at most
-- memory_cap live per profile), so the corpus size, lengths and term frequencies are counted at
-- query time. relevance is the share of the query a memory covers, weighted by rarity:
-- its score over the score of a memory holding every query term once at the average length (the
-- sum of the terms' idf; a term no memory holds counts fully), at most 1. The query's terms and
-- their tsquery are built once, before the statement, not for each memory, and
-- the statement keeps its generic plan: planning it took longer than running it. It runs as the
-- owner, so all its callers share that plan: under the memories policy a plan belongs to the role
-- it was made for, and callers running as the owner (search_messages) and as themselves
-- (search_memories, select_memories) re-planned it at every switch, about 350 us. The policy's
-- rule is checked here instead: the user and trusted callers read the user's memories, an admin
-- those of the tenants they administer, anyone else none.
create function memory_private.lexical_memories(
    p_user_id uuid, p_query text, p_limit integer default 50, p_profile_id uuid default null
)
returns table (memory_id uuid, score double precision, relevance double precision)
language plpgsql
stable
rows 50
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_any tsquery;
    v_uid uuid := (select auth.uid());
    -- Null for the user themselves and trusted callers; an admin's tenants otherwise.
    v_tenants uuid[];
begin
    if cardinality(v_terms) = 0 then
        return;
    end if;
    if v_uid is null then
        if not memory_private.trusted_caller() then
            return;
        end if;
    elsif v_uid is distinct from p_user_id then
        v_tenants := memory_private.administered_tenants();
    end if;
    v_any := memory_private.any_term(v_terms);
    return query
    with corpus as (
        select c.id, c.search from memory_private.memory_corpus(p_user_id, p_profile_id, v_tenants) as c
    ),
    sizes as (
        select greatest(count(*), 1)::double precision as documents,
            coalesce(avg(length(c.search)), 1)::double precision as average
        from corpus as c
    ),
    matches as materialized (
        select c.id, w.lexeme, cardinality(w.positions) as tf, length(c.search) as length
        from corpus as c
        cross join lateral unnest(
            pg_catalog.ts_filter(pg_catalog.setweight(c.search, 'A', v_terms), '{a}')
        ) as w (lexeme, positions, weights)
        where c.search @@ v_any
    ),
    frequencies as (
        select t.term, s.documents, s.average, count(x.id)::double precision as df
        from unnest(v_terms) as t (term)
        cross join sizes as s
        left join matches as x on x.lexeme = t.term
        group by t.term, s.documents, s.average
    ),
    attainable as (
        select sum(memory_private.bm25(1, f.average, f.average, f.df, f.documents)) as score from frequencies as f
    ),
    scored as (
        select x.id, sum(memory_private.bm25(x.tf, x.length, f.average, f.df, f.documents)) as score
        from matches as x
        join frequencies as f on f.term = x.lexeme
        group by x.id
    )
    select s.id, s.score, least(1, s.score / a.score)
    from scored as s
    cross join attainable as a
    order by 2 desc, s.id
    limit p_limit;
end
$$;

revoke all on function memory_private.lexical_memories(uuid, text, integer, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_memories(uuid, text, integer, uuid) to authenticated, service_role;
