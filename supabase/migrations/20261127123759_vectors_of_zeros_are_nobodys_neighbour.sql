-- A vector of zeros has no direction: a query embedding of zeros is refused (22023), and a stored
-- one is nobody's neighbour. Its cosine distance is NaN, which fused by score would make every
-- result's score NaN.

set check_function_bodies = off;

-- The function sets pgvector's hnsw.iterative_scan, a parameter that exists once its library is loaded.
select '[1]'::extensions.vector;

create or replace function memory_private.check_query_embedding(p_embedding extensions.vector)
returns integer
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_dimensions integer := (memory_private.setting('embedding_dimensions'))::integer;
begin
    if p_embedding is not null and extensions.vector_dims(p_embedding) <> v_dimensions then
        raise exception using errcode = '22023',
            message = format(
                'the query embedding has %s dimensions; the embedding model %s has %s',
                extensions.vector_dims(p_embedding), memory_private.setting('embedding_model') ->> 0, v_dimensions
            );
    end if;
    if extensions.vector_norm(p_embedding) = 0 then
        raise exception using errcode = '22023', message = 'the query embedding is all zeros: it has no direction';
    end if;
    return v_dimensions;
end
$function$;

create or replace function memory_private.vector_memories(
    p_user_id uuid, p_embedding extensions.vector, p_limit integer default 50
)
returns table (memory_id uuid, distance double precision)
language plpgsql
stable rows 50
set search_path to ''
as $function$
declare
    v_model text;
begin
    perform memory_private.check_query_embedding(p_embedding);
    if p_embedding is null then
        return;
    end if;
    v_model := memory_private.setting('embedding_model') ->> 0;
    -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last): it is
    -- nobody's neighbour, and a NaN would make every fused score NaN.
    return query
    select n.memory_id, n.distance
    from (
        select e.memory_id, (e.embedding operator(extensions.<=>) p_embedding)::double precision as distance
        from memory_private.memory_embeddings as e
        where e.user_id = p_user_id and e.model = v_model
        order by 2, 1
        limit p_limit
    ) as n
    where n.distance <> 'NaN'::double precision;
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
begin
    if p_embedding is null then
        return;
    end if;
    v_model := memory_private.setting('embedding_model') ->> 0;
    if p_conversation_id is not null then
        -- One conversation: exact, over its messages; a static statement keeps its plan.
        -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last): it is
        -- nobody's neighbour, and a NaN would make every fused score NaN.
        return query
        select n.message_id, n.distance
        from (
            select e.message_id, (e.embedding operator(extensions.<=>) p_embedding)::double precision as distance
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
    v_cost := (memory_private.setting('hnsw_visit_cost'))::double precision;
    if v_cost is null or v_cost < 0 then
        raise exception using errcode = '22023', message = 'setting hnsw_visit_cost must be a number of at least 0';
    end if;
    v_mine := coalesce((select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0);
    v_all := greatest(
        v_mine,
        (select c.reltuples from pg_catalog.pg_class as c where c.oid = 'memory_private.message_embeddings'::regclass)
    );
    if v_mine * v_mine > p_limit * v_all * v_cost then
        -- The model's partial HNSW index; relaxed order, so the nearest are sorted again.
        execute format(
            'with nearest as materialized (
                select e.message_id, (e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1)::double precision
                    as distance
                from memory_private.message_embeddings as e
                where e.user_id = $2 and e.model = %2$L
                order by e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1
                limit $3
            )
            select array_agg(n.message_id order by n.distance, n.message_id),
                array_agg(n.distance order by n.distance, n.message_id)
            from nearest as n',
            v_dimensions, v_model
        ) into v_ids, v_distances using p_embedding, p_user_id, p_limit;
        if cardinality(v_ids) >= p_limit then
            return query select x.id, x.distance from unnest(v_ids, v_distances) as x (id, distance);
            return;
        end if;
    end if;
    -- Exact over the user's vectors of the model, through (user_id, model); without a vector of
    -- zeros, as above (the HNSW index holds none).
    return query
    select n.message_id, n.distance
    from (
        select e.message_id, (e.embedding operator(extensions.<=>) p_embedding)::double precision as distance
        from memory_private.message_embeddings as e
        where e.user_id = p_user_id and e.model = v_model
        order by 2, 1
        limit p_limit
    ) as n
    where n.distance <> 'NaN'::double precision;
end
$function$;


revoke all on function memory_private.check_query_embedding(extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_query_embedding(extensions.vector) to authenticated, service_role;
revoke all on function memory_private.vector_memories(uuid, extensions.vector, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_memories(uuid, extensions.vector, integer) to authenticated,
service_role;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
