-- Vectors are stored in half precision: half the bytes an exact scan reads and a vector costs a
-- message, and an HNSW index for models of up to 4,000 dimensions (2,000 before), which
-- set_embedding_model now takes. The HNSW indexes are named after their model
-- (memory_private.ensure_embedding_indexes): each is dropped before the columns change type and the
-- current model's is built again after. Changing the type rewrites both tables, and they stay
-- locked until the index is built (about 10 s for 73,254 vectors): embed jobs and deletes of
-- messages wait meanwhile.
do $$
declare
    v_index text;
begin
    for v_index in
        select i.indexrelid::regclass::text
        from pg_catalog.pg_index as i
        join pg_catalog.pg_class as c on c.oid = i.indexrelid
        join pg_catalog.pg_am as a on a.oid = c.relam
        where i.indrelid = 'memory_private.message_embeddings'::regclass and a.amname = 'hnsw'
    loop
        execute format('drop index %s', v_index);
    end loop;
end
$$;

alter table memory_private.memory_embeddings
alter column embedding set data type extensions.halfvec using embedding::extensions.halfvec;

alter table memory_private.message_embeddings
alter column embedding set data type extensions.halfvec using embedding::extensions.halfvec;

set check_function_bodies = off;

create or replace function memory.finish_embeddings(p_job_id bigint, p_worker text, p_model text, p_items jsonb)
returns jsonb
language plpgsql
set search_path to ''
as $function$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_dimensions integer := (memory_private.setting('embedding_dimensions'))::integer;
    v_current boolean := p_model = memory_private.setting('embedding_model') ->> 0;
    v_bad jsonb;
    v_stored integer := 0;
    v_memories integer;
begin
    if jsonb_typeof(p_items) is distinct from 'array' then
        raise exception using errcode = '22023', message = 'items must be a JSON array';
    end if;
    select i.item into v_bad
    from jsonb_array_elements(p_items) as i (item)
    where jsonb_typeof(i.item) <> 'object'
        or i.item ->> 'kind' is null or i.item ->> 'kind' not in ('message', 'memory')
        or i.item ->> 'id' is null
        or jsonb_typeof(i.item -> 'embedding') is distinct from 'array'
        or jsonb_array_length(i.item -> 'embedding') <> v_dimensions
    limit 1;
    if v_bad is not null then
        raise exception using errcode = '22023',
            message = format('each item needs kind (message or memory), id and an embedding of %s numbers', v_dimensions),
            detail = left(v_bad::text, 200);
    end if;
    if v_current then
        -- A row deleted since the input was read is skipped; one whose text changed since (an edit,
        -- or the message before it edited or deleted), told by the version the input gave it, is
        -- left with its note for the next batch, which reads its text again.
        with items as (
            select i.item ->> 'id' as id, i.item ->> 'version' as version, i.item ->> 'embedding' as embedding
            from jsonb_array_elements(p_items) as i (item)
            where i.item ->> 'kind' = 'message' and i.item ->> 'id' ~ '^[0-9]{1,18}$'
        ),
        texts as (
            select t.id, t.version
            from memory_private.embedding_texts(v_job.user_id, array(select x.id::bigint from items as x)) as t
        ),
        changed as (
            select t.id from items as x join texts as t on t.id = x.id::bigint where x.version <> t.version
        ),
        stored as (
            insert into memory_private.message_embeddings as e (message_id, user_id, model, embedding)
            select t.id, v_job.user_id, p_model, x.embedding::extensions.halfvec
            from items as x
            join texts as t on t.id = x.id::bigint
            where t.id not in (select c.id from changed as c)
            on conflict (message_id) do update
            set model = excluded.model, embedding = excluded.embedding, created_at = now()
            returning e.message_id
        ),
        taken as (
            delete from memory_private.pending_embeddings as n
            where n.user_id = v_job.user_id
                and n.message_id in (select x.id::bigint from items as x)
                and n.message_id not in (select c.id from changed as c)
        )
        select count(*)::integer into v_stored from stored;
        -- Memories by id (an id that is no uuid names none): compared as text, every memory of the
        -- user was read for each batch.
        insert into memory_private.memory_embeddings as e (memory_id, user_id, model, embedding)
        select mm.id, mm.user_id, p_model, x.embedding::extensions.halfvec
        from (
            select
                case when i.item ->> 'id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                    then (i.item ->> 'id')::uuid end as id,
                i.item ->> 'version' as version,
                i.item ->> 'embedding' as embedding
            from jsonb_array_elements(p_items) as i (item)
            where i.item ->> 'kind' = 'memory'
        ) as x
        join memory.memories as mm on mm.id = x.id and mm.user_id = v_job.user_id
        where x.version is null or x.version = md5(mm.content)
        on conflict (memory_id) do update
        set model = excluded.model, embedding = excluded.embedding, created_at = now();
        get diagnostics v_memories = row_count;
        v_stored := v_stored + v_memories;
    end if;
    -- Rows committed before this check are seen; a later one waits for the user's next job.
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('stored', v_stored, 'model', p_model));
    if exists (select 1 from memory_private.unembedded(v_job.user_id, 1)) then
        perform memory_private.queue_embed(v_job.user_id);
    end if;
    return jsonb_build_object('stored', v_stored, 'current_model', v_current);
end
$function$;

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
        '((embedding::extensions.halfvec(%s)) extensions.halfvec_cosine_ops) where model = %L',
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
    -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last): it is
    -- nobody's neighbour, and a NaN would make every fused score NaN.
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
        -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last): it is
        -- nobody's neighbour, and a NaN would make every fused score NaN.
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
    -- zeros, as above (the HNSW index holds none).
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


revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public,
anon,
authenticated,
service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
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

create or replace function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path to ''
as $function$
begin
    if p_model is null or p_model !~ '^[[:print:]]{1,200}$' then
        raise exception using errcode = '22023', message = 'model must be 1..200 printable characters';
    end if;
    -- HNSW indexes vectors of half precision up to 4,000 dimensions (text-embedding-3-large has 3,072).
    if p_dimensions is null or p_dimensions < 1 or p_dimensions > 4000 then
        raise exception using errcode = '22023', message = 'dimensions must be 1..4000 (the HNSW limit)';
    end if;
    if memory_private.setting('embedding_model') ->> 0 = p_model
        and (memory_private.setting('embedding_dimensions'))::integer = p_dimensions then
        return;
    end if;
    perform memory_private.ensure_embedding_indexes(p_model, p_dimensions);
    update memory_private.settings set value = to_jsonb(p_model) where key = 'embedding_model';
    update memory_private.settings set value = to_jsonb(p_dimensions) where key = 'embedding_dimensions';
    -- The scan starts with the newest messages; the embed scan queues their users.
    perform memory_private.note_for_new_model(p_restart => true);
    perform memory_private.queue_embeddings();
    perform memory_private.queue_embed(u.id)
    from memory.users as u
    where exists (select 1 from memory.memories as mm where mm.user_id = u.id)
        and not exists (select 1 from memory.messages as m where m.user_id = u.id);
end
$function$;


revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;

select memory_private.ensure_embedding_indexes(
    memory_private.setting('embedding_model') ->> 0, (memory_private.setting('embedding_dimensions'))::integer
);
