-- Why: a query embedding of other dimensions than the current model's comes from another model and
-- would rank nothing meaningful; it is refused (22023) naming the current model. Returns the
-- dimensions the vector searches cast to.
create function memory_private.check_query_embedding(p_embedding extensions.vector)
returns integer
language plpgsql
stable
set search_path = ''
as $$
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
    return v_dimensions;
end
$$;

revoke all on function memory_private.check_query_embedding(extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_query_embedding(extensions.vector) to authenticated, service_role;
