-- Memory vectors are searched exactly, per user (a user holds at most memory_cap live memories a
-- profile; an HNSW scan filtered to one user walks the other users' vectors), and the statements
-- that search one user's memories or one conversation's messages are static, so they keep their
-- plans. Every model's memory HNSW index goes: none is read any more.
do $$
declare
    v_index text;
begin
    for v_index in
        select i.indexname from pg_catalog.pg_indexes as i
        where i.schemaname = 'memory_private' and i.tablename = 'memory_embeddings'
            and i.indexname like 'memory\_embeddings\_hnsw\_%'
    loop
        execute format('drop index memory_private.%I', v_index);
    end loop;
end
$$;


set check_function_bodies = off;

create or replace function memory_private.ensure_embedding_indexes(p_model text, p_dimensions integer)
returns void
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_suffix text := left(md5(p_model || '/' || p_dimensions), 12);
begin
    execute format(
        'create index if not exists %I on memory_private.message_embeddings using hnsw '
        '((embedding::extensions.vector(%s)) extensions.vector_cosine_ops) where model = %L',
        'message_embeddings_hnsw_' || v_suffix, p_dimensions, p_model
    );
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
    return query
    select e.memory_id, (e.embedding operator(extensions.<=>) p_embedding)::double precision
    from memory_private.memory_embeddings as e
    where e.user_id = p_user_id and e.model = v_model
    order by 2, 1
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
set "hnsw.iterative_scan" to 'relaxed_order'
as $function$
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
$function$;


revoke all on function memory_private.ensure_embedding_indexes(text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.ensure_embedding_indexes(text, integer) to service_role;
revoke all on function memory_private.vector_memories(uuid, extensions.vector, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_memories(uuid, extensions.vector, integer) to authenticated,
service_role;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
