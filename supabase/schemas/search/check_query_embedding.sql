-- Why: a query embedding of other dimensions than the current model's comes from another model and
-- would rank nothing meaningful; it is refused (22023) naming the current model, and so is one of
-- zeros, which has no direction to compare. Returns the dimensions the vector searches cast to.
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
    if extensions.vector_norm(p_embedding) = 0 then
        raise exception using errcode = '22023', message = 'the query embedding is all zeros: it has no direction';
    end if;
    -- Vectors are searched in half precision, whose values end at 65,504: a longer query (a model's
    -- are about 1 long) failed in the cast.
    if extensions.vector_norm(p_embedding) > 65504 then
        raise exception using errcode = '22023',
            message = 'the query embedding is longer than 65,504: its values do not fit half precision';
    end if;
    return v_dimensions;
end
$$;

revoke all on function memory_private.check_query_embedding(extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_query_embedding(extensions.vector) to authenticated, service_role;
