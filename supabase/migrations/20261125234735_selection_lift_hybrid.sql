-- Memory selection lifts by the hybrid retrieval: a memory's share of the query's terms weighted by
-- rarity (lexical_memories' new relevance column) or its similarity among the nearest to the query's
-- meaning, instead of trigram word similarity computed for every memory that could reach the top;
-- neither side is called without its input. lexical_memories builds the query's tsquery once, not
-- once per memory. memory_private.setting is plpgsql, so its lookup keeps its plan.
drop function if exists memory_private.lexical_memories(p_user_id uuid, p_query text, p_limit integer);

set check_function_bodies = off;

create or replace function memory.select_memories(
    p_user_id uuid default null::uuid,
    p_profile_id uuid default null::uuid,
    p_query text default null::text,
    p_limit integer default null::integer,
    p_token_budget integer default null::integer,
    p_message_id bigint default null::bigint,
    p_record boolean default false,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.selected_memory
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_profile uuid := coalesce(
        p_profile_id, (select p.id from memory.profiles as p where p.user_id = v_user and p.is_primary)
    );
    v_limit integer := coalesce(p_limit, (memory_private.setting('memory_select_limit'))::integer);
    v_budget integer := coalesce(p_token_budget, (memory_private.setting('memory_token_budget'))::integer);
    v_chosen memory.selected_memory [];
begin
    if v_limit < 1 or v_limit > 50 or v_budget < 1 then
        raise exception using errcode = '22023', message = 'limit must be 1..50 and the token budget positive';
    end if;
    with lexical as (
        -- Without a query (or its embedding) the side is not called at all.
        select l.memory_id, l.relevance from memory_private.lexical_memories(v_user, p_query, null) as l
        where p_query is not null
    ),
    near as (
        -- The memories nearest the query's meaning.
        select n.memory_id, greatest(0, 1 - n.distance) as similarity
        from memory_private.vector_memories(v_user, p_query_embedding, v_limit) as n
        where p_query_embedding is not null
    ),
    scored as (
        select m.id, m.content, m.type, m.category, m.confidence, m.pinned, m.reference_count,
            m.last_referenced_at,
            memory_private.memory_score(
                t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
            ) * (1 + greatest(coalesce(l.relevance, 0), coalesce(n.similarity, 0))::numeric) as final_score,
            ceil(length(m.content) / 4.0)::integer + 2 as cost
        from memory.memories as m
        join memory.memory_types as t on t.type = m.type
        left join lexical as l on l.memory_id = m.id
        left join near as n on n.memory_id = m.id
        where m.user_id = v_user and m.profile_id = v_profile
            and m.active and not m.archived and m.deleted_at is null
            and (m.expires_at is null or m.expires_at > now())
    ),
    ranked as (
        select c.*, row_number() over w as position, sum(c.cost) over w as spent
        from scored as c
        window w as (order by c.pinned desc, c.final_score desc, c.id)
    )
    select coalesce(array_agg(row(
        r.id, r.content, r.type, r.category, r.confidence, r.pinned, r.reference_count,
        r.last_referenced_at, round(r.final_score, 4), r.cost
    )::memory.selected_memory order by r.position), '{}')
    into v_chosen
    from ranked as r
    where r.position <= v_limit and r.spent <= v_budget;
    if (p_record or p_message_id is not null) and cardinality(v_chosen) > 0 then
        perform memory_private.record_selection(array(select c.id from unnest(v_chosen) as c), p_message_id);
    end if;
    return query select * from unnest(v_chosen);
end
$function$;

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
            pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(c.search, 'D'), 'A', v_terms), '{a}')
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

create or replace function memory_private.setting(p_key text)
returns jsonb
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    return (select s.value from memory_private.settings as s where s.key = p_key);
end
$function$;


revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.lexical_memories(uuid, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_memories(uuid, text, integer) to authenticated, service_role;
revoke all on function memory_private.setting(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.setting(text) to authenticated, service_role;
