-- The user's memories nearest to the embedding (cosine distance), at most p_limit. Exact, over the
-- user's memories of the current model: a user holds at most memory_cap live memories a profile,
-- where an HNSW scan filtered to one user among many walks the other users' vectors. A static
-- statement, so its plan is kept (a dynamic one was planned on every call, about 0.3 ms).
create function memory_private.vector_memories(
    p_user_id uuid, p_embedding extensions.vector, p_limit integer default 50
)
returns table (memory_id uuid, distance double precision)
language plpgsql
stable
rows 50
set search_path = ''
as $$
declare
    v_model text;
begin
    perform memory_private.check_query_embedding(p_embedding);
    if p_embedding is null then
        return;
    end if;
    v_model := memory_private.setting('embedding_model') ->> 0;
    -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last) and a row
    -- the server refused has none (null, sorted after): neither is anybody's neighbour, and a NaN
    -- would make every fused score NaN.
    return query
    select n.memory_id, n.distance
    from (
        select e.memory_id,
            (e.embedding operator(extensions.<=>) p_embedding::extensions.halfvec)::double precision as distance
        from memory_private.memory_embeddings as e
        where e.user_id = p_user_id and e.model = v_model
        order by 2, 1
        limit p_limit
    ) as n
    where n.distance <> 'NaN'::double precision;
end
$$;

revoke all on function memory_private.vector_memories(uuid, extensions.vector, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_memories(uuid, extensions.vector, integer)
to authenticated, service_role;
