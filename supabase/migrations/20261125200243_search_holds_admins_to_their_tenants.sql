-- Search's page read holds a tenant admin to the messages policy's rule (only the messages of the
-- tenants they administer: a user moved into a tenant keeps older messages outside it); the
-- trusted-caller test of the access checks lives in memory_private.trusted_caller; query_terms
-- keeps its cached plan whatever its caller sets; lexical search refuses a lexical_candidates
-- setting that is not a positive integer.
set check_function_bodies = off;

create or replace function memory_private.trusted_caller()
returns boolean
language sql
stable
set search_path to ''
as $function$
    select pg_has_role(coalesce(nullif(current_setting('role'), 'none'), session_user), 'service_role', 'usage')
$function$;

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
    select greatest(c.documents, 1), c.lexemes::double precision / greatest(c.documents, 1)
    into v_documents, v_average
    from memory_private.search_corpus as c where c.user_id = p_user_id;
    if not found then
        return;
    end if;
    -- Each term's frequency: the folded count plus the user's messages not folded yet.
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
    select x.id, sum(memory_private.bm25(
        cardinality(w.positions), length(x.search), v_average,
        greatest((v_frequencies ->> w.lexeme)::double precision, 1), v_documents
    ))
    from matches as x
    -- Only the query's lexemes, cut out in C (marked with weight A, then kept by weight).
    cross join lateral unnest(
        pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(x.search, 'D'), 'A', v_terms), '{a}')
    ) as w (lexeme, positions, weights)
    group by x.id
    order by 2 desc, x.id
    limit p_limit;
end
$function$;

create or replace function memory_private.reads_conversation(p_conversation_id uuid)
returns boolean
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_uid uuid := (select auth.uid());
begin
    if v_uid is null then
        return memory_private.trusted_caller();
    end if;
    return exists (
        select 1 from memory.conversations as c
        where c.id = p_conversation_id
            and (c.expires_at is null or c.expires_at > now())
            and (
                c.user_id = v_uid
                or c.id = any(memory_private.joined_conversations())
                or c.tenant_id = any(memory_private.administered_tenants())
            )
    );
end
$function$;

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
        return memory_private.trusted_caller();
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
    -- Planned for the ids at hand, so the page is always read by id. An admin reads only the
    -- messages of the tenants they administer, as under the messages policy.
    return query execute
        'select m.* from unnest($1) with ordinality as f (id, position)
        join memory.messages as m on m.id = f.id
        where m.user_id = $2 and (m.expires_at is null or m.expires_at > now())
            and ($5 or m.tenant_id = any((select memory_private.administered_tenants())::uuid[]))
        order by f.position
        limit $3 offset $4'
    using v_ids, v_user, p_limit, p_offset, coalesce(auth.uid() = v_user, true);
end
$function$;


revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
revoke all on function memory_private.reads_conversation(uuid) from public, anon, authenticated, service_role;
revoke all on function memory_private.reads_user_messages(uuid) from public, anon, authenticated, service_role;
revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.trusted_caller() from public, anon, authenticated, service_role;

alter function memory_private.query_terms(text) set plan_cache_mode = force_generic_plan;
