-- Why: the user's messages nearest to the embedding (cosine distance), at most p_limit. Within one
-- conversation, exact over its vectors. Over the user's history, the cheapest of three scans, each
-- priced in exact distances: the exact scan reads every vector of the user; the model's HNSW
-- index, filtered to the user with pgvector's iterative scan, finds the user's rows at their share
-- of it, about p_limit * all vectors / the user's vectors visits at hnsw_visit_cost distances each
-- (a graph step, a row fetch: 10 to 14 measured on e5-small vectors in full precision, 13 to 22 in
-- half); the user's own vector lists (memory_private.vector_lists, from vector_lists_from messages)
-- cost their centres plus vector_list_probes lists of about the user's vectors / lists each. The
-- lists and the index are approximate; either that comes back short of p_limit is answered by the
-- exact scan. Left to the planner, a user holding 3,000 of 48,000 random vectors got the HNSW
-- path: about 40 ms and three quarters of the true nearest 50, against about 1 ms exact.
-- The user's size is their message count kept by the search-term fold (search_corpus), the whole
-- index's the table's statistics. Sequential scans are off, so the exact statements read the
-- user's index whatever a generic plan estimates for a database of few users.
create function memory_private.vector_messages(
    p_user_id uuid, p_embedding extensions.vector, p_conversation_id uuid default null, p_limit integer default 50
)
returns table (message_id bigint, distance double precision)
language plpgsql
stable
rows 50
set search_path = ''
set enable_seqscan = off
-- pgvector's iterative scan: a filtered HNSW scan goes on until it has enough of the user's rows.
set "hnsw.iterative_scan" = 'relaxed_order'
as $$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
    v_model text;
    v_mine double precision;
    v_all double precision;
    v_ids bigint[];
    v_distances double precision[];
    v_cost double precision;
    v_probes integer;
    v_lists integer;
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
    v_probes := memory_private.number_setting('vector_list_probes', 1);
    v_mine := coalesce((select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0);
    v_all := greatest(
        v_mine,
        (select c.reltuples from pg_catalog.pg_class as c where c.oid = 'memory_private.message_embeddings'::regclass)
    );
    v_lists := (select l.lists from memory_private.vector_lists as l where l.user_id = p_user_id and l.model = v_model);
    if v_lists + v_probes * v_mine / v_lists < least(v_mine, p_limit * v_all * v_cost / greatest(v_mine, 1)) then
        -- The nearest lists' vectors, each list read together by one probe of the list index (as
        -- `list_no = any(...)` a generic plan read every vector of the user and filtered them).
        select array_agg(n.message_id order by n.distance, n.message_id),
            array_agg(n.distance order by n.distance, n.message_id)
        into v_ids, v_distances
        from (
            select x.message_id, (x.embedding operator(extensions.<=>) v_query)::double precision as distance
            from memory_private.vector_lists as l
            cross join lateral unnest(memory_private.nearest_centroids(l.centroids, v_query, v_probes)) as p (list_no)
            cross join lateral (
                select e.message_id, e.embedding
                from memory_private.vector_list_entries as e
                where e.user_id = p_user_id and e.model = v_model and e.list_no = p.list_no
                -- Kept apart from the join, so each list is one index probe.
                offset 0
            ) as x
            where l.user_id = p_user_id and l.model = v_model
            order by 2, 1
            limit p_limit
        ) as n
        where n.distance <> 'NaN'::double precision;
        if cardinality(v_ids) >= p_limit then
            return query select x.id, x.distance from unnest(v_ids, v_distances) as x (id, distance);
            return;
        end if;
    elsif v_mine * v_mine > p_limit * v_all * v_cost then
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
$$;

revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
