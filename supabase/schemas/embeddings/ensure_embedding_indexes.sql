-- The HNSW index of a model's message vectors, named after it; idempotent. Memories have none:
-- they are searched exactly, per user (memory_private.vector_memories).
-- Security definer: service_role sets the model but does not own the tables.
create function memory_private.ensure_embedding_indexes(p_model text, p_dimensions integer)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_suffix text := left(md5(p_model || '/' || p_dimensions), 12);
begin
    execute format(
        'create index if not exists %I on memory_private.message_embeddings using hnsw '
        '((embedding::extensions.halfvec(%s)) extensions.halfvec_cosine_ops) where model = %L',
        'message_embeddings_hnsw_' || v_suffix, p_dimensions, p_model
    );
end
$$;

revoke all on function memory_private.ensure_embedding_indexes(text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.ensure_embedding_indexes(text, integer) to service_role;
