-- A row whose text the embeddings server refuses (a message past the model's input, say) keeps the
-- refusal instead of a vector, under the model: the embed job stores the user's other rows and does
-- not send that text again, where one such text failed every batch it was in, so the user's rows
-- stopped getting vectors for good. Texts are cut at embedding_max_chars (8,000) before they are
-- sent. Adding the columns and checking the new constraints (not valid, then validated) reads the
-- vector tables without blocking writers.

alter table memory_private.memory_embeddings add column refused text;

alter table memory_private.memory_embeddings alter column embedding drop not null;

alter table memory_private.message_embeddings add column refused text;

alter table memory_private.message_embeddings alter column embedding drop not null;

alter table memory_private.memory_embeddings add constraint memory_embeddings_refused_check check (
    ((refused ~ '[^[:space:]]'::text) and (length(refused) <= 500))
) not valid;

alter table memory_private.memory_embeddings validate constraint "memory_embeddings_refused_check";

alter table memory_private.memory_embeddings add constraint memory_embeddings_vector_or_refusal check (
    ((embedding is null) <> (refused is null))
) not valid;

alter table memory_private.memory_embeddings validate constraint "memory_embeddings_vector_or_refusal";

alter table memory_private.message_embeddings add constraint message_embeddings_refused_check check (
    ((refused ~ '[^[:space:]]'::text) and (length(refused) <= 500))
) not valid;

alter table memory_private.message_embeddings validate constraint "message_embeddings_refused_check";

alter table memory_private.message_embeddings add constraint message_embeddings_vector_or_refusal check (
    ((embedding is null) <> (refused is null))
) not valid;

alter table memory_private.message_embeddings validate constraint "message_embeddings_vector_or_refusal";

set check_function_bodies = off;

-- vector_messages sets pgvector's hnsw.iterative_scan, a parameter that exists once its library is loaded.
select '[1]'::extensions.vector;

create or replace function memory_private.refusal(p_reason text)
returns text
language plpgsql
immutable
set search_path to ''
as $function$
begin
    return left(btrim(regexp_replace(p_reason, '[[:space:]]+', ' ', 'g')), 500);
end
$function$;

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
    v_refused integer := 0;
    v_memories integer;
    v_memories_refused integer;
begin
    if jsonb_typeof(p_items) is distinct from 'array' then
        raise exception using errcode = '22023', message = 'items must be a JSON array';
    end if;
    select i.item into v_bad
    from jsonb_array_elements(p_items) as i (item)
    where jsonb_typeof(i.item) <> 'object'
        or i.item ->> 'kind' is null or i.item ->> 'kind' not in ('message', 'memory')
        or i.item ->> 'id' is null
        or not coalesce(
            (i.item ? 'embedding') <> (i.item ? 'refused')
            and case
                when i.item ? 'refused' then jsonb_typeof(i.item -> 'refused') = 'string'
                    and i.item ->> 'refused' ~ '[^[:space:]]'
                else jsonb_typeof(i.item -> 'embedding') = 'array'
                    and jsonb_array_length(i.item -> 'embedding') = v_dimensions
            end,
            false
        )
    limit 1;
    if v_bad is not null then
        raise exception using errcode = '22023',
            message = format(
                'each item needs kind (message or memory), id, and an embedding of %s numbers or refused (why)',
                v_dimensions
            ),
            detail = left(v_bad::text, 200);
    end if;
    if v_current then
        -- A row deleted since the input was read is skipped; one whose text changed since (an edit,
        -- or the message before it edited or deleted), told by the version the input gave it, is
        -- left with its note for the next batch, which reads its text again.
        with items as (
            select i.item ->> 'id' as id, i.item ->> 'version' as version, i.item ->> 'embedding' as embedding,
                memory_private.refusal(i.item ->> 'refused') as refused
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
            insert into memory_private.message_embeddings as e (message_id, user_id, model, embedding, refused)
            select t.id, v_job.user_id, p_model, x.embedding::extensions.halfvec, x.refused
            from items as x
            join texts as t on t.id = x.id::bigint
            where t.id not in (select c.id from changed as c)
            on conflict (message_id) do update
            set model = excluded.model, embedding = excluded.embedding, refused = excluded.refused, created_at = now()
            returning e.refused
        ),
        taken as (
            delete from memory_private.pending_embeddings as n
            where n.user_id = v_job.user_id
                and n.message_id in (select x.id::bigint from items as x)
                and n.message_id not in (select c.id from changed as c)
        )
        select count(*) filter (where s.refused is null)::integer, count(s.refused)::integer
        into v_stored, v_refused
        from stored as s;
        -- Memories by id (an id that is no uuid names none): compared as text, every memory of the
        -- user was read for each batch.
        with stored as (
            insert into memory_private.memory_embeddings as e (memory_id, user_id, model, embedding, refused)
            select mm.id, mm.user_id, p_model, x.embedding::extensions.halfvec, x.refused
            from (
                select
                    case when i.item ->> 'id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                        then (i.item ->> 'id')::uuid end as id,
                    i.item ->> 'version' as version,
                    i.item ->> 'embedding' as embedding,
                    memory_private.refusal(i.item ->> 'refused') as refused
                from jsonb_array_elements(p_items) as i (item)
                where i.item ->> 'kind' = 'memory'
            ) as x
            join memory.memories as mm on mm.id = x.id and mm.user_id = v_job.user_id
            where x.version is null or x.version = md5(mm.content)
            on conflict (memory_id) do update
            set model = excluded.model, embedding = excluded.embedding, refused = excluded.refused, created_at = now()
            returning e.refused
        )
        select count(*) filter (where s.refused is null)::integer, count(s.refused)::integer
        into v_memories, v_memories_refused
        from stored as s;
        v_stored := v_stored + v_memories;
        v_refused := v_refused + v_memories_refused;
    end if;
    -- Rows committed before this check are seen; a later one waits for the user's next job.
    perform memory.complete_job(
        p_job_id, p_worker, jsonb_build_object('stored', v_stored, 'refused', v_refused, 'model', p_model)
    );
    if exists (select 1 from memory_private.unembedded(v_job.user_id, 1)) then
        perform memory_private.queue_embed(v_job.user_id);
    end if;
    return jsonb_build_object('stored', v_stored, 'refused', v_refused, 'current_model', v_current);
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text, version text)
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_max integer := (memory_private.setting('embedding_max_chars'))::integer;
begin
    if v_max is null or v_max < 1 then
        raise exception using errcode = '22023', message = 'setting embedding_max_chars must be a number of at least 1';
    end if;
    return query
    (
        select 'message', t.id::text, left(t.content, v_max), t.version
        from memory_private.embedding_texts(p_user_id, array(
            select n.message_id from memory_private.pending_embeddings as n
            where n.user_id = p_user_id
            order by n.message_id desc
            limit p_limit
        )) as t
        order by t.id desc
    )
    union all
    (
        select 'memory', mm.id::text, left(mm.content, v_max), md5(mm.content)
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null and not exists (
            select 1 from memory_private.memory_embeddings as e
            where e.memory_id = mm.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by mm.created_at desc, mm.id
        limit p_limit
    )
    limit p_limit;
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
$function$;


revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public,
anon,
authenticated,
service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
revoke all on function memory_private.refusal(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.refusal(text) to service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
revoke all on function memory_private.vector_memories(uuid, extensions.vector, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_memories(uuid, extensions.vector, integer) to authenticated,
service_role;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
comment on table memory_private.memory_embeddings is
'One vector per memory (or the server''s refusal of its text), under the model that made it; '
'only the current model''s count.';
comment on table memory_private.message_embeddings is
'One vector per message (or the server''s refusal of its text), under the model that made it; '
'only the current model''s count.';

insert into memory_private.settings (key, value, description) values (
    'embedding_max_chars', '8000',
    'Characters of a row''s text an embed job sends at most (the beginning): about 2,000 tokens of English, '
    'within OpenAI''s 8,192; lower it for a model of shorter input whose server refuses longer texts.'
);
