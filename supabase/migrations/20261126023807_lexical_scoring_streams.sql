-- Lexical message search unnests each candidate's query lexemes in the select list, which streams
-- them, instead of a lateral function scan that fills a tuplestore per candidate.
set check_function_bodies = off;

create or replace function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null::uuid, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable rows 50
set search_path to ''
set plan_cache_mode to 'force_custom_plan'
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
    -- The corpus: what the fold counted, plus the user's messages not folded yet, less the deleted
    -- ones not unfolded yet.
    select coalesce(c.documents, 0) + u.documents - d.documents, coalesce(c.lexemes, 0) + u.lexemes - d.lexemes
    into v_documents, v_lexemes
    from (
        select count(*) as documents, coalesce(sum(length(x.search)), 0) as lexemes
        from (
            select m.search from memory.messages as m
            where m.user_id = p_user_id and m.id > v_folded
            limit 20000
        ) as x
    ) as u
    cross join (
        select count(*) as documents, coalesce(sum(length(g.search)), 0) as lexemes
        from memory_private.search_unfolds as g where g.user_id = p_user_id
    ) as d
    left join memory_private.search_corpus as c on c.user_id = p_user_id;
    if v_documents < 1 then
        return;
    end if;
    v_average := v_lexemes / v_documents;
    -- Each term's frequency likewise.
    select
        jsonb_object_agg(f.term, f.df),
        array_agg(f.term order by f.df, f.term) filter (where f.running <= v_candidates or f.position = 1)
    into v_frequencies, v_rarest
    from (
        select d.term, d.df, sum(d.df) over w as running, row_number() over w as position
        from (
            select t.term, coalesce(s.documents, 0) + (
                select count(*) from (
                    select 1 from memory.messages as m
                    where m.user_id = p_user_id and m.id > v_folded and m.search @@ quote_literal(t.term)::tsquery
                    limit 20000
                ) as u
            ) - (
                select count(*) from memory_private.search_unfolds as g
                where g.user_id = p_user_id and g.search @@ quote_literal(t.term)::tsquery
            ) as df
            from unnest(v_terms) as t (term)
            left join memory_private.search_terms as s on s.user_id = p_user_id and s.lexeme = t.term
        ) as d
        window w as (order by d.df, d.term)
    ) as f;
    return query
    with matches as (
        select m.id, m.search
        from memory.messages as m
        where m.user_id = p_user_id and m.search @@ memory_private.any_term(v_rarest)
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
        order by m.id desc
        limit v_candidates
    )
    select w.id, sum(memory_private.bm25(
        cardinality((w.term).positions), w.length, v_average,
        greatest((v_frequencies ->> (w.term).lexeme)::double precision, 1), v_documents
    ))
    from (
        -- Only the query's lexemes, cut out in C (marked with weight A, then kept by weight), and
        -- unnested in the select list: a set-returning call there streams its rows, where a lateral
        -- function scan fills a tuplestore for each candidate (about a fifth of the scoring).
        select x.id, length(x.search) as length, unnest(
            pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(x.search, 'D'), 'A', v_terms), '{a}')
        ) as term
        from matches as x
    ) as w
    group by w.id
    order by 2 desc, w.id
    limit p_limit;
end
$function$;


revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
