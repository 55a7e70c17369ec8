-- Deletions and edits of messages are noted for the search-term fold whatever its watermark their
-- writer saw; the fold that passes a message's id keeps the note only with the words it counted.
-- A message deleted while a fold posted it kept its postings, its words, for good.
set check_function_bodies = off;

create or replace function memory_private.fold_search_terms(
    p_batch integer default 100000, p_wait interval default '00:00:01'::interval
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_from bigint;
    v_to bigint;
    v_edited bigint[];
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    -- Notes of messages a fold has passed: their words were counted (notes of messages not passed
    -- yet wait for the fold that passes them).
    with gone as (
        delete from memory_private.search_unfolds as g where g.message_id <= v_from
        returning g.user_id, g.message_id, g.search
    ),
    sizes as (
        update memory_private.search_corpus as c
        set documents = greatest(0, c.documents - g.documents), lexemes = greatest(0, c.lexemes - g.lexemes)
        from (
            select x.user_id, count(*) as documents, sum(length(x.search)) as lexemes from gone as x group by x.user_id
        ) as g
        where c.user_id = g.user_id
    ),
    -- Each posting's whole key first, so each is deleted by one probe (joined to the notes alone,
    -- a plan read the user's postings once for every note).
    gone_postings as materialized (
        select x.user_id, w.lexeme, x.message_id
        from gone as x
        cross join lateral unnest(tsvector_to_array(x.search)) as w (lexeme)
    ),
    postings as (
        delete from memory_private.search_postings as p
        using gone_postings as g
        where p.user_id = g.user_id and p.lexeme = g.lexeme and p.message_id = g.message_id
    ),
    terms as (
        update memory_private.search_terms as s
        set documents = greatest(0, s.documents - g.documents)
        from (
            select x.user_id, x.lexeme, count(*)::integer as documents
            from gone_postings as x
            group by x.user_id, x.lexeme
        ) as g
        where s.user_id = g.user_id and s.lexeme = g.lexeme
    )
    -- An edited message is still there: its words now are counted below.
    select array_agg(x.message_id) from gone as x
    where exists (select 1 from memory.messages as m where m.id = x.message_id)
    into v_edited;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is not null and not memory_private.await_message_writers(p_wait) then
        v_to := null;
    end if;
    if v_to is null and v_edited is null then
        return 0;
    end if;
    -- Read after the wait: every message up to v_to has committed or never will.
    with batch as materialized (
        select m.id, m.user_id, m.search from memory.messages as m where m.id > v_from and m.id <= v_to
        union all
        select m.id, m.user_id, m.search from memory.messages as m where m.id = any(v_edited)
    ),
    postings as (
        insert into memory_private.search_postings (user_id, lexeme, message_id, frequency, length)
        select b.user_id, w.lexeme, b.id, cardinality(w.positions), length(b.search)
        from batch as b
        cross join lateral unnest(b.search) as w (lexeme, positions, weights)
        -- In the index's order: a term's new postings go to the same leaf pages.
        order by b.user_id, w.lexeme, b.id
    ),
    sizes as (
        insert into memory_private.search_corpus as c (user_id, documents, lexemes)
        select b.user_id, count(*), sum(length(b.search)) from batch as b group by b.user_id
        on conflict (user_id) do update
        set documents = c.documents + excluded.documents, lexemes = c.lexemes + excluded.lexemes
    ),
    -- The notes this fold's range already holds (writers that committed before the batch was
    -- read): a message the batch does not hold was never counted; one it holds was counted with
    -- the batch's words. Notes committed later hold the words the batch read.
    uncounted as (
        delete from memory_private.search_unfolds as g
        where g.message_id > v_from and g.message_id <= v_to
            and not exists (select 1 from batch as b where b.id = g.message_id)
    ),
    counted as (
        update memory_private.search_unfolds as g set search = b.search
        from batch as b
        where g.message_id = b.id and g.message_id > v_from and g.message_id <= v_to
            and g.search is distinct from b.search
    )
    insert into memory_private.search_terms as s (user_id, lexeme, documents)
    select b.user_id, w.lexeme, count(*)
    from batch as b
    cross join lateral unnest(tsvector_to_array(b.search)) as w (lexeme)
    group by b.user_id, w.lexeme
    on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents;
    if v_to is null then
        return 0;
    end if;
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
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
$function$;

create or replace function memory_private.refold_edited_message()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    insert into memory_private.search_unfolds (user_id, message_id, search)
    values (old.user_id, old.id, old.search)
    on conflict (message_id) do nothing;
    return null;
end
$function$;

create or replace function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    insert into memory_private.search_unfolds (user_id, message_id, search)
    select o.user_id, o.id, o.search
    from old_messages as o
    -- An erased user's statistics went with the user.
    where exists (select 1 from memory.users as u where u.id = o.user_id)
    on conflict (message_id) do nothing;
    return null;
end
$function$;


revoke all on function memory_private.fold_search_terms(integer, interval)
from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer, interval) to service_role;
revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
revoke all on function memory_private.refold_edited_message() from public, anon, authenticated, service_role;
revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;
