-- Why: BM25 over one user's live messages (optionally one conversation), best first, at a cost that
-- does not grow with the history: frequencies come from search_terms and search_corpus (plus
-- messages not folded yet, less deleted ones not unfolded yet) and the candidates are the newest
-- messages holding the query's rarest terms, at most lexical_candidates, and always the newest
-- holding the rarest term that any message holds.
-- Across the user's history the candidates and their scores on those terms come from the postings
-- (memory_private.search_postings, the index alone) and from the messages the fold has not reached;
-- the best twice p_limit of them are scored on every query term from their own lexemes. So no more
-- than those and the unfolded messages are read from the messages' heap, wherever the matches lie.
-- Within one conversation the matches come from the postings (each message read to know its
-- conversation) when they are fewer than twice the conversation's messages, and from a walk of the
-- conversation otherwise, and every one is scored.
-- Runs with its caller's rights: RLS decides for a direct caller, and search_messages calls it as
-- the owner after its own access check. Its statements keep one generic plan per session (planning
-- them for each call cost about a tenth of a search), written so that no plan walks the user's
-- history.
create function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable
rows 50
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_documents double precision;
    v_lexemes double precision;
    v_average double precision;
    v_folded bigint := (select f.through from memory_private.message_scans as f where f.name = 'search_terms');
    v_frequencies jsonb;
    v_rarest text[];
    v_rarest_df double precision[];
    v_any tsquery;
    v_matching double precision;
    v_in_conversation boolean;
    v_candidates integer := (memory_private.setting('lexical_candidates'))::integer;
    v_unfolded_ids bigint[];
    v_unfolded tsvector[];
begin
    if v_candidates is null or v_candidates < 1 then
        raise exception using errcode = '22023', message = 'setting lexical_candidates must be a positive integer';
    end if;
    if cardinality(v_terms) = 0 then
        return;
    end if;
    -- The user's messages the fold has not reached, read once for both statements below.
    select coalesce(array_agg(u.id), '{}'), coalesce(array_agg(u.search), '{}')
    into v_unfolded_ids, v_unfolded
    from memory_private.unfolded_messages(p_user_id, v_folded) as u;
    -- The corpus and each term's frequency: what the fold counted, plus those messages, less the
    -- deleted ones it has not taken out yet.
    with unfolded as materialized (
        select u.search from unnest(v_unfolded) as u (search)
    ),
    unfolds as materialized (
        -- Notes of messages the fold has not passed were never counted.
        select g.search from memory_private.search_unfolds as g
        where g.user_id = p_user_id and g.message_id <= v_folded
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
    ),
    -- The rarest terms, while their frequencies sum to the bound; terms no message holds find
    -- nothing, so the rarest term that some message holds is always taken.
    admitted as (
        select r.term, r.df from ranked as r where r.running <= v_candidates or r.running = r.df
    )
    select
        coalesce((select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0)
        + (select count(*) from unfolded) - (select count(*) from unfolds),
        coalesce((select c.lexemes from memory_private.search_corpus as c where c.user_id = p_user_id), 0)
        + (select coalesce(sum(length(u.search)), 0) from unfolded as u)
        - (select coalesce(sum(length(g.search)), 0) from unfolds as g),
        (select jsonb_object_agg(r.term, r.df) from ranked as r),
        (select array_agg(a.term order by a.df, a.term) from admitted as a),
        (select array_agg(greatest(a.df, 1) order by a.df, a.term) from admitted as a),
        (select sum(a.df) from admitted as a)
    into v_documents, v_lexemes, v_frequencies, v_rarest, v_rarest_df, v_matching;
    if v_documents < 1 then
        return;
    end if;
    v_average := v_lexemes / v_documents;
    if p_conversation_id is not null then
        v_any := memory_private.any_term(v_rarest);
        v_in_conversation := v_matching > coalesce(
            (select 2 * c.last_turn from memory.conversations as c where c.id = p_conversation_id), 0
        );
    end if;
    return query
    -- A branch not taken does not run.
    with posted as (
        -- The newest postings of each admitted term (across the history, lexical_candidates of
        -- each; within a conversation, all: they are fewer than twice its messages, else it is
        -- walked), and the admitted terms of the messages the fold has not reached (newer than any
        -- posting), with the term's frequency.
        select p.message_id as id, p.frequency::double precision as frequency, p.length, t.df
        from unnest(v_rarest, v_rarest_df) as t (term, df)
        cross join lateral (
            select s.message_id, s.frequency, s.length
            from memory_private.search_postings as s
            where v_in_conversation is not true and s.user_id = p_user_id and s.lexeme = t.term
            order by s.message_id desc
            limit case when p_conversation_id is null then v_candidates end
        ) as p
        union all
        select u.id, cardinality((u.term).positions), u.length,
            v_rarest_df[array_position(v_rarest, (u.term).lexeme)]
        from (
            select x.id, length(x.search) as length,
                unnest(pg_catalog.ts_filter(pg_catalog.setweight(x.search, 'A', v_rarest), '{a}')) as term
            from unnest(v_unfolded_ids, v_unfolded) as x (id, search)
            where v_in_conversation is not true
        ) as u
    ),
    -- Across the history: the newest candidates, scored on the admitted terms; the best twice the
    -- page go on.
    candidates as (
        select p.id, sum(memory_private.bm25(p.frequency, p.length, v_average, p.df, v_documents)) as score
        from posted as p
        where p_conversation_id is null
        group by p.id
        order by p.id desc
        limit v_candidates
    ),
    best as materialized (
        select c.id from candidates as c order by c.score desc, c.id desc limit 2 * p_limit
    ),
    -- Within a conversation: the matches it holds, each message probed by id to know its
    -- conversation (joined as a set, a generic plan read the whole conversation).
    found as materialized (
        select m.id, m.search
        from (select distinct p.id from posted as p where p_conversation_id is not null) as x
        cross join lateral (
            select m.id, m.search from memory.messages as m
            where m.id = x.id and m.conversation_id = p_conversation_id
                and (m.expires_at is null or m.expires_at > now())
            limit 1
        ) as m
    ),
    matches as (
        -- A posting of a message deleted since the last fold finds no message here.
        select m.id, m.search
        from best as b
        join memory.messages as m on m.id = b.id
        where m.expires_at is null or m.expires_at > now()
        union all
        (select f.id, f.search from found as f order by f.id desc limit v_candidates)
        union all
        select x.id, x.search
        from memory_private.conversation_matches(p_user_id, p_conversation_id, v_any, v_candidates) as x
        where v_in_conversation
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
$$;

revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
