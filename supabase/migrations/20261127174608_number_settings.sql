-- Numeric settings are read through one check (memory_private.number_setting): a setting that is
-- not a number, or below its least value, is 22023 naming it.

set check_function_bodies = off;

-- vector_messages sets pgvector's hnsw.iterative_scan, a parameter that exists once its library is loaded.
select '[1]'::extensions.vector;

create or replace function memory_private.number_setting(p_key text, p_min double precision)
returns double precision
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_value jsonb := memory_private.setting(p_key);
begin
    if jsonb_typeof(v_value) is distinct from 'number' or v_value::double precision < p_min then
        raise exception using errcode = '22023',
            message = format('setting %s must be a number of at least %s', p_key, p_min);
    end if;
    return v_value::double precision;
end
$function$;

create or replace function memory_private.prompt_text(p_text text)
returns text
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_max integer := memory_private.number_setting('llm_text_chars', 1);
begin
    if length(p_text) <= v_max then
        return p_text;
    end if;
    return left(p_text, v_max) || format(e'\n[… %s more characters not shown]', length(p_text) - v_max);
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text, version text)
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_max integer := memory_private.number_setting('embedding_max_chars', 1);
begin
    return query
    (
        select 'message', t.id::text, left(t.content, v_max), t.version
        from memory_private.embedding_texts(p_user_id, array(
            select n.message_id from memory_private.pending_embeddings as n
            where n.user_id = p_user_id
            order by n.message_id desc
            limit p_limit
        )) as t
        order by t.id desc
    )
    union all
    (
        select 'memory', mm.id::text, left(mm.content, v_max), md5(mm.content)
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null and not exists (
            select 1 from memory_private.memory_embeddings as e
            where e.memory_id = mm.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by mm.created_at desc, mm.id
        limit p_limit
    )
    limit p_limit;
end
$function$;

create or replace function memory_private.vector_messages(
    p_user_id uuid, p_embedding extensions.vector, p_conversation_id uuid default null::uuid, p_limit integer default 50
)
returns table (message_id bigint, distance double precision)
language plpgsql
stable rows 50
set search_path to ''
set enable_seqscan to 'off'
set "hnsw.iterative_scan" to 'relaxed_order'
as $function$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
    v_model text;
    v_mine double precision;
    v_all double precision;
    v_ids bigint[];
    v_distances double precision[];
    v_cost double precision;
    -- The vectors are stored in half precision (half the bytes an exact scan reads).
    v_query extensions.halfvec := p_embedding::extensions.halfvec;
begin
    if p_embedding is null then
        return;
    end if;
    v_model := memory_private.setting('embedding_model') ->> 0;
    if p_conversation_id is not null then
        -- One conversation: exact, over its messages; a static statement keeps its plan.
        -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last) and a row
        -- the server refused has none (null, sorted after): neither is anybody's neighbour, and a NaN
        -- would make every fused score NaN.
        return query
        select n.message_id, n.distance
        from (
            select e.message_id, (e.embedding operator(extensions.<=>) v_query)::double precision as distance
            from memory.messages as m
            join memory_private.message_embeddings as e on e.message_id = m.id
            where m.conversation_id = p_conversation_id and m.user_id = p_user_id and e.model = v_model
            order by 2, 1
            limit p_limit
        ) as n
        where n.distance <> 'NaN'::double precision;
        return;
    end if;
    -- Only a search over the user's history chooses a scan.
    v_cost := memory_private.number_setting('hnsw_visit_cost', 0);
    v_mine := coalesce((select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0);
    v_all := greatest(
        v_mine,
        (select c.reltuples from pg_catalog.pg_class as c where c.oid = 'memory_private.message_embeddings'::regclass)
    );
    if v_mine * v_mine > p_limit * v_all * v_cost then
        -- The model's partial HNSW index; relaxed order, so the nearest are sorted again.
        execute format(
            'with nearest as materialized (
                select e.message_id,
                    (e.embedding::extensions.halfvec(%1$s) operator(extensions.<=>) $1)::double precision as distance
                from memory_private.message_embeddings as e
                where e.user_id = $2 and e.model = %2$L
                order by e.embedding::extensions.halfvec(%1$s) operator(extensions.<=>) $1
                limit $3
            )
            select array_agg(n.message_id order by n.distance, n.message_id),
                array_agg(n.distance order by n.distance, n.message_id)
            from nearest as n',
            v_dimensions, v_model
        ) into v_ids, v_distances using v_query, p_user_id, p_limit;
        if cardinality(v_ids) >= p_limit then
            return query select x.id, x.distance from unnest(v_ids, v_distances) as x (id, distance);
            return;
        end if;
    end if;
    -- Exact over the user's vectors of the model, through (user_id, model); without a vector of
    -- zeros or a refusal, as above (the HNSW index holds neither).
    return query
    select n.message_id, n.distance
    from (
        select e.message_id, (e.embedding operator(extensions.<=>) v_query)::double precision as distance
        from memory_private.message_embeddings as e
        where e.user_id = p_user_id and e.model = v_model
        order by 2, 1
        limit p_limit
    ) as n
    where n.distance <> 'NaN'::double precision;
end
$function$;


revoke all on function memory_private.number_setting(text, double precision)
from public, anon, authenticated, service_role;
grant execute on function memory_private.number_setting(text, double precision) to authenticated, service_role;
revoke all on function memory_private.prompt_text(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.prompt_text(text) to service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
