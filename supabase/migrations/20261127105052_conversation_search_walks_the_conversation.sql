-- Lexical search within a conversation takes its candidates from a walk of the conversation, newest
-- first (memory_private.conversation_matches), when the conversation is smaller than the user's
-- matches of the query's rarest terms, which the term index reads from every conversation.
set check_function_bodies = off;

create or replace function memory_private.conversation_matches(
    p_user_id uuid, p_conversation_id uuid, p_query tsquery, p_limit integer
)
returns table (id bigint, search tsvector)
language plpgsql
stable rows 50
set search_path to ''
set enable_seqscan to 'off'
set enable_bitmapscan to 'off'
set plan_cache_mode to 'force_generic_plan'
as $function$
begin
    return query
    select m.id, m.search from memory.messages as m
    where m.conversation_id = p_conversation_id and m.user_id = p_user_id and m.search @@ p_query
        and (m.expires_at is null or m.expires_at > now())
    order by m.turn_number desc, m.role
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
    v_any tsquery;
    v_matching double precision;
    v_walk boolean;
    v_walk_rows integer;
    v_in_conversation boolean;
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
        select u.search from memory_private.unfolded_messages(p_user_id, v_folded) as u (search)
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
        (select sum(a.df) from admitted as a)
    into v_documents, v_lexemes, v_frequencies, v_rarest, v_matching;
    if v_documents < 1 then
        return;
    end if;
    v_average := v_lexemes / v_documents;
    v_any := memory_private.any_term(v_rarest);
    -- Reading every match costs about v_matching rows; walking the user's messages newest first
    -- until the bound is met, about v_candidates * v_documents / v_matching when the matches are
    -- spread through the history. A walk reads twice that at most, then keeps the newest matches;
    -- when it finds too few (the matches are older: a word used much, long ago) every match is
    -- read after all, so a search never costs more than three reads of every match. Within one
    -- conversation the matches come from the term index when they are fewer than the conversation's
    -- messages, and from a walk of the conversation otherwise (conversation_matches).
    v_walk := p_conversation_id is null and v_matching * v_matching > v_candidates * v_documents;
    v_in_conversation := p_conversation_id is not null and v_matching > coalesce(
        (select 2 * c.last_turn from memory.conversations as c where c.id = p_conversation_id), 0
    );
    v_walk_rows := case when v_walk then ceil(2 * v_candidates * v_documents / v_matching)::integer end;
    return query
    -- The walk goes through (user_id, id) alone: the user is a range of that index (with `user_id
    -- =` the planner may order by id alone and walk the primary key through every newer user's
    -- messages) and the match is tested in the select list, out of the term index's reach. The
    -- read of every match takes them from the term index (the fence leaves the planner no walk of
    -- the history), then keeps the newest. A branch not taken does not run.
    with walked as materialized (
        -- Only a match's lexemes are kept.
        select m.id, case when m.search @@ v_any then m.search end as search
        from memory.messages as m
        where v_walk and (m.user_id, m.id) >= (p_user_id, 0::bigint)
            and (m.user_id, m.id) <= (p_user_id, 9223372036854775807::bigint)
            and (m.expires_at is null or m.expires_at > now())
        order by m.user_id desc, m.id desc
        limit v_walk_rows
    ),
    walk as (
        -- Enough: the bound met, or the user's whole history walked.
        select count(w.search) >= v_candidates or count(*) < v_walk_rows as enough
        from walked as w
    ),
    found as materialized (
        select m.id, m.search
        from memory.messages as m
        where not v_in_conversation and not (v_walk and (select k.enough from walk as k))
            and m.user_id = p_user_id and m.search @@ v_any
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
    ),
    matches as (
        (select f.id, f.search from found as f order by f.id desc limit v_candidates)
        union all
        (
            select w.id, w.search from walked as w
            where w.search is not null and (select k.enough from walk as k)
            order by w.id desc
            limit v_candidates
        )
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
$function$;


revoke all on function memory_private.conversation_matches(uuid, uuid, tsquery, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.conversation_matches(uuid, uuid, tsquery, integer) to authenticated,
service_role;
revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
