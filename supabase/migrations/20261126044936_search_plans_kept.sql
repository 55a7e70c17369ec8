-- Search keeps its plans. lexical_messages' statements keep one generic plan per session, written so
-- no plan walks a user's history: the messages the term fold has not reached are read once through
-- (user_id, id) (the user index gains the id), and the candidates come from the term index behind a
-- fence. The rarest term some message holds is always a candidate source (terms no message holds
-- had taken that place, and a query with one found nothing once its other terms passed the bound).
-- search_messages reads its page with one key probe per id instead of a statement planned per call.
-- Rebuilding the user index locks writes to messages while it builds.
drop index if exists memory.messages_user_id_idx;

create index messages_user_id_idx on memory.messages using btree (user_id, id);

set check_function_bodies = off;

create or replace function memory_private.lexical_memories(p_user_id uuid, p_query text, p_limit integer default 50)
returns table (memory_id uuid, score double precision, relevance double precision)
language plpgsql
stable rows 50
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_any tsquery;
begin
    if cardinality(v_terms) = 0 then
        return;
    end if;
    v_any := memory_private.any_term(v_terms);
    return query
    with corpus as (
        select mm.id, mm.search
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null
            and (mm.expires_at is null or mm.expires_at > now())
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
$function$;

create or replace function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null::uuid, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable rows 50
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_documents double precision;
    v_lexemes double precision;
    v_average double precision;
    v_folded bigint := (select f.through from memory_private.message_scans as f where f.name = 'search_terms');
    v_frequencies jsonb;
    v_rarest text[];
    v_candidates integer := (memory_private.setting('lexical_candidates'))::integer;
begin
    if v_candidates is null or v_candidates < 1 then
        raise exception using errcode = '22023', message = 'setting lexical_candidates must be a positive integer';
    end if;
    if cardinality(v_terms) = 0 then
        return;
    end if;
    -- The corpus and each term's frequency: what the fold counted, plus the user's messages it has
    -- not reached (read once, by the newest ids), less the deleted ones it has not taken out yet.
    with unfolded as materialized (
        select m.search from memory.messages as m
        where m.user_id = p_user_id and m.id > v_folded
        limit 20000
    ),
    unfolds as materialized (
        select g.search from memory_private.search_unfolds as g where g.user_id = p_user_id
    ),
    terms as (
        select t.term, coalesce(s.documents, 0)
            + (select count(*) from unfolded as u where u.search @@ quote_literal(t.term)::tsquery)
            - (select count(*) from unfolds as g where g.search @@ quote_literal(t.term)::tsquery) as df
        from unnest(v_terms) as t (term)
        left join memory_private.search_terms as s on s.user_id = p_user_id and s.lexeme = t.term
    ),
    ranked as (
        select d.term, d.df, sum(d.df) over w as running
        from terms as d
        window w as (order by d.df, d.term)
    )
    select
        coalesce((select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0)
        + (select count(*) from unfolded) - (select count(*) from unfolds),
        coalesce((select c.lexemes from memory_private.search_corpus as c where c.user_id = p_user_id), 0)
        + (select coalesce(sum(length(u.search)), 0) from unfolded as u)
        - (select coalesce(sum(length(g.search)), 0) from unfolds as g),
        (select jsonb_object_agg(r.term, r.df) from ranked as r),
        -- Terms no message holds find nothing, so the rarest term that some message holds is
        -- always taken.
        (select array_agg(r.term order by r.df, r.term) filter (where r.running <= v_candidates or r.running = r.df)
        from ranked as r)
    into v_documents, v_lexemes, v_frequencies, v_rarest;
    if v_documents < 1 then
        return;
    end if;
    v_average := v_lexemes / v_documents;
    return query
    -- All matches of the rarest terms come from the term index (the fence leaves the planner no
    -- walk of the user's history in id order), then the newest are kept.
    with found as materialized (
        select m.id, m.search
        from memory.messages as m
        where m.user_id = p_user_id and m.search @@ memory_private.any_term(v_rarest)
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
    ),
    matches as (
        select f.id, f.search from found as f order by f.id desc limit v_candidates
    )
    select w.id, sum(memory_private.bm25(
        cardinality((w.term).positions), w.length, v_average,
        greatest((v_frequencies ->> (w.term).lexeme)::double precision, 1), v_documents
    ))
    from (
        -- Only the query's lexemes, cut out in C (marked with weight A, then kept by weight; the
        -- stored vectors hold only to_tsvector's default weight D), and
        -- unnested in the select list: a set-returning call there streams its rows, where a lateral
        -- function scan fills a tuplestore for each candidate (about a fifth of the scoring).
        select x.id, length(x.search) as length, unnest(
            pg_catalog.ts_filter(pg_catalog.setweight(x.search, 'A', v_terms), '{a}')
        ) as term
        from matches as x
    ) as w
    group by w.id
    order by 2 desc, w.id
    limit p_limit;
end
$function$;

create or replace function memory_private.search_messages(
    p_query text,
    p_user_id uuid,
    p_conversation_id uuid,
    p_limit integer,
    p_offset integer,
    p_query_embedding extensions.vector
)
returns setof memory.messages
language plpgsql
stable security definer
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_depth integer;
    v_ids bigint[];
    -- Null for the user themselves and trusted callers; an admin's tenants otherwise.
    v_tenants uuid[];
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    -- Each ranking goes deeper than the page, so fusion can promote what one side ranks lower.
    v_depth := greatest(p_limit + p_offset, 50);
    if not memory_private.reads_user_messages(v_user) then
        return;
    end if;
    if not coalesce(auth.uid() = v_user, true) then
        v_tenants := memory_private.administered_tenants();
    end if;
    with by_text as (
        select l.message_id as id, l.score
        from memory_private.lexical_messages(v_user, p_query, p_conversation_id, v_depth) as l
    ),
    by_memory as (
        select mm.source_message_id as id, max(l.score) as score
        from memory_private.lexical_memories(v_user, p_query, v_depth) as l
        join memory.memories as mm on mm.id = l.memory_id
        where mm.source_message_id is not null
            and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        group by mm.source_message_id
    ),
    lexical as (
        select coalesce(t.id, v.id) as id,
            rank() over (order by coalesce(t.score, 0) + coalesce(v.score, 0) desc) as rank
        from by_text as t
        full join by_memory as v on v.id = t.id
    ),
    -- A message is as near as it or the nearest memory drawn from it.
    semantic as (
        select x.id, rank() over (order by min(x.distance)) as rank
        from (
            select n.message_id as id, n.distance
            from memory_private.vector_messages(v_user, p_query_embedding, p_conversation_id, v_depth) as n
            -- Without an embedding neither vector side is called.
            where p_query_embedding is not null
            union all
            select mm.source_message_id, n.distance
            from memory_private.vector_memories(v_user, p_query_embedding, v_depth) as n
            join memory.memories as mm on mm.id = n.memory_id
            where p_query_embedding is not null and mm.source_message_id is not null
                and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        ) as x
        group by x.id
    ),
    fused as (
        select coalesce(l.id, s.id) as id,
            coalesce(1.0 / (60 + l.rank), 0) + coalesce(1.0 / (60 + s.rank), 0) as score
        from lexical as l
        full join semantic as s on s.id = l.id
    )
    select array_agg(f.id order by f.score desc, f.id) into v_ids from fused as f;
    -- The page is read by id: one primary-key probe per fused id, in rank order (the lateral's
    -- limit keeps it a probe per id, where a join could scan the user's messages). An admin reads
    -- only the messages of the tenants they administer, as under the messages policy.
    return query
    select m.*
    from unnest(v_ids) with ordinality as f (id, position)
    cross join lateral (
        select x.* from memory.messages as x
        where x.id = f.id and x.user_id = v_user and (x.expires_at is null or x.expires_at > now())
            and (v_tenants is null or x.tenant_id = any(v_tenants))
        limit 1
    ) as m
    order by f.position
    limit p_limit offset p_offset;
end
$function$;


revoke all on function memory_private.lexical_memories(uuid, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_memories(uuid, text, integer) to authenticated, service_role;
revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
