-- The user's messages nearest to the embedding (cosine distance), at most p_limit.
create function memory_private.vector_messages(
    p_user_id uuid, p_embedding extensions.vector, p_conversation_id uuid default null, p_limit integer default 50
)
returns table (message_id bigint, distance double precision)
language plpgsql
stable
rows 50
set search_path = ''
-- pgvector's iterative scan: a filtered HNSW scan goes on until it has enough of the user's rows.
set "hnsw.iterative_scan" = 'relaxed_order'
as $$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
    v_model text := memory_private.setting('embedding_model') ->> 0;
begin
    if p_embedding is null then
        return;
    end if;
    if p_conversation_id is not null then
        -- One conversation: exact, over its messages; a static statement keeps its plan.
        return query
        select e.message_id, (e.embedding operator(extensions.<=>) p_embedding)::double precision
        from memory.messages as m
        join memory_private.message_embeddings as e on e.message_id = m.id
        where m.conversation_id = p_conversation_id and m.user_id = p_user_id and e.model = v_model
        order by 2, 1
        limit p_limit;
        return;
    end if;
    -- The model's partial HNSW index; relaxed order, so the nearest are sorted again.
    return query execute format(
        'with nearest as materialized (
            select e.message_id, (e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1)::double precision as distance
            from memory_private.message_embeddings as e
            where e.user_id = $2 and e.model = %2$L
            order by e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1
            limit $3
        )
        select n.message_id, n.distance from nearest as n order by 2, 1',
        v_dimensions, v_model
    ) using p_embedding, p_user_id, p_limit;
end
$$;

revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
