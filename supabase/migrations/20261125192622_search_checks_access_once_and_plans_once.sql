-- memory.search_messages' body moves to memory_private.search_messages, which runs as the owner
-- after one check that the caller may read the user's messages (reads_user_messages), so a
-- signed-in user's search reads its candidates instead of all their messages under the per-row
-- policy, and a tenant admin searches a user's turns as they read them. Its fusing statement keeps a
-- generic plan and reads the page by id; query_terms and lexical_memories become plpgsql
-- (Postgres 15 plans a sql function's statement on every call), lexical_memories with a generic
-- plan; lexical_messages plans for each call's values, whatever its caller sets.
set check_function_bodies = off;

create or replace function memory_private.reads_user_messages(p_user_id uuid)
returns boolean
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_uid uuid := (select auth.uid());
begin
    if v_uid is null then
        return pg_has_role(coalesce(nullif(current_setting('role'), 'none'), session_user), 'service_role', 'usage');
    end if;
    return v_uid = p_user_id or exists (
        select 1 from memory.users as u
        where u.id = p_user_id and u.tenant_id = any(memory_private.administered_tenants())
    );
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
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    -- Each ranking goes deeper than the page, so fusion can promote what one side ranks lower.
    v_depth := greatest(p_limit + p_offset, 50);
    if not memory_private.reads_user_messages(v_user) then
        return;
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
            union all
            select mm.source_message_id, n.distance
            from memory_private.vector_memories(v_user, p_query_embedding, v_depth) as n
            join memory.memories as mm on mm.id = n.memory_id
            where mm.source_message_id is not null
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
    -- Planned for the ids at hand, so the page is always read by id.
    return query execute
        'select m.* from unnest($1) with ordinality as f (id, position)
        join memory.messages as m on m.id = f.id
        where m.user_id = $2 and (m.expires_at is null or m.expires_at > now())
        order by f.position
        limit $3 offset $4'
    using v_ids, v_user, p_limit, p_offset;
end
$function$;

create or replace function memory.search_messages(
    p_query text,
    p_user_id uuid default null::uuid,
    p_conversation_id uuid default null::uuid,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.messages
language sql
stable
set search_path to ''
as $function$
    select s.* from memory_private.search_messages(
        p_query, p_user_id, p_conversation_id, p_limit, p_offset, p_query_embedding
    ) as s
$function$;

create or replace function memory_private.lexical_memories(p_user_id uuid, p_query text, p_limit integer default 50)
returns table (memory_id uuid, score double precision)
language plpgsql
stable rows 50
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
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
$function$;

create or replace function memory_private.query_terms(p_query text)
returns text[]
language plpgsql
immutable
set search_path to ''
as $function$
begin
    return (select coalesce(array_agg(t.lexeme order by t.first_position, t.lexeme), '{}')
    from (
        select w.lexeme, min(p.position) as first_position
        from unnest(to_tsvector('english'::regconfig, left(coalesce(p_query, ''), 10000))) as w (lexeme, positions, weights)
        cross join lateral unnest(w.positions) as p (position)
        group by w.lexeme
        order by min(p.position), w.lexeme
        limit 32
    ) as t);
end
$function$;


revoke all on function memory.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.lexical_memories(uuid, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_memories(uuid, text, integer) to authenticated, service_role;
revoke all on function memory_private.query_terms(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.query_terms(text) to authenticated, service_role;
revoke all on function memory_private.reads_user_messages(uuid) from public, anon, authenticated, service_role;
revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;

alter function memory_private.lexical_messages(uuid, text, uuid, integer) set plan_cache_mode = force_custom_plan;
