-- The user's memories nearest to the embedding (cosine distance), at most p_limit.
create function memory_private.vector_memories(
    p_user_id uuid, p_embedding extensions.vector, p_limit integer default 50
)
returns table (memory_id uuid, distance double precision)
language plpgsql
stable
rows 50
set search_path = ''
set "hnsw.iterative_scan" = 'relaxed_order'
as $$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
begin
    if p_embedding is null then
        return;
    end if;
    return query execute format(
        'with nearest as materialized (
            select e.memory_id, (e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1)::double precision as distance
            from memory_private.memory_embeddings as e
            where e.user_id = $2 and e.model = %2$L
            order by e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1
            limit $3
        )
        select n.memory_id, n.distance from nearest as n order by 2, 1',
        v_dimensions, memory_private.setting('embedding_model') ->> 0
    ) using p_embedding, p_user_id, p_limit;
end
$$;

revoke all on function memory_private.vector_memories(uuid, extensions.vector, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_memories(uuid, extensions.vector, integer)
to authenticated, service_role;
