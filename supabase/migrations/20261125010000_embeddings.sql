-- Embeddings of messages and memories, computed by jobs, never on the write path.
--
-- Why: lexical ranking finds the words a user typed, not what they meant ("my knee hurts" for
-- "running injury"). Supabase ships pgvector; the kit stores one vector per message and memory
-- under the embedding model in use and compares the query's vector with them.
-- * The model and its dimensions are settings (`memory.set_embedding_model`); only vectors of the
--   current model count, so changing it re-embeds through the queue while search goes on (rows
--   not embedded yet are found lexically).
-- * A new or edited message or memory asks for its user's one `embed` job (a dedup key per user);
--   the job embeds that user's rows without a current vector, newest first, a batch at a time,
--   and queues itself again while any remain. The trigger locks a running job's row, so a row
--   written while its batch runs is seen by the job's final check or re-queues the job.
-- * Vectors live in memory_private (the Data API does not expose them); users read only their
--   own (RLS), which is what search needs; service_role's embed job writes them.
-- * One HNSW index per model (an expression index on the vector cast to the model's dimensions,
--   partial on the model), created when the model is set.

create extension if not exists vector with schema extensions;

insert into memory_private.settings (key, value, description) values
(
    'embedding_model', '"offline-hash-384"',
    'The embedding model whose vectors search compares (memory.set_embedding_model changes it).'
),
('embedding_dimensions', '384', 'Dimensions of the embedding model''s vectors.'),
('embedding_batch', '64', 'Rows one embed job sends to the embeddings server.');

update memory_private.settings
set value = value || '["embed"]'::jsonb
where key = 'job_kinds' and not value ? 'embed';

create table memory_private.message_embeddings (
    message_id bigint primary key references memory.messages (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    model text not null,
    embedding extensions.vector not null,
    created_at timestamptz not null default now()
);
create index message_embeddings_user_model_idx on memory_private.message_embeddings (user_id, model);
comment on table memory_private.message_embeddings is
'One vector per message, under the model that made it; only the current model''s count.';

create table memory_private.memory_embeddings (
    memory_id uuid primary key references memory.memories (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    model text not null,
    embedding extensions.vector not null,
    created_at timestamptz not null default now()
);
create index memory_embeddings_user_model_idx on memory_private.memory_embeddings (user_id, model);
comment on table memory_private.memory_embeddings is
'One vector per memory, under the model that made it; only the current model''s count.';

alter table memory_private.message_embeddings enable row level security;
alter table memory_private.memory_embeddings enable row level security;
create policy "Users read the vectors of their own messages" on memory_private.message_embeddings
for select to authenticated
using (user_id = (select auth.uid()));
create policy "Users read the vectors of their own memories" on memory_private.memory_embeddings
for select to authenticated
using (user_id = (select auth.uid()));
revoke all on memory_private.message_embeddings, memory_private.memory_embeddings
from anon, authenticated, service_role;
grant select on memory_private.message_embeddings, memory_private.memory_embeddings to authenticated;
-- The embed job's RPC (memory.finish_embeddings) runs as service_role.
grant select, insert, update, delete on memory_private.message_embeddings, memory_private.memory_embeddings
to service_role;

-- The HNSW index of a model, named after it; idempotent.
-- Security definer: service_role sets the model but does not own the tables.
create function memory_private.ensure_embedding_indexes(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path = ''
as $$
declare
    v_suffix text := left(md5(p_model || '/' || p_dimensions), 12);
begin
    execute format(
        'create index if not exists %I on memory_private.message_embeddings using hnsw '
        '((embedding::extensions.vector(%s)) extensions.vector_cosine_ops) where model = %L',
        'message_embeddings_hnsw_' || v_suffix, p_dimensions, p_model
    );
    execute format(
        'create index if not exists %I on memory_private.memory_embeddings using hnsw '
        '((embedding::extensions.vector(%s)) extensions.vector_cosine_ops) where model = %L',
        'memory_embeddings_hnsw_' || v_suffix, p_dimensions, p_model
    );
end
$$;
alter function memory_private.ensure_embedding_indexes(text, integer) security definer;
revoke all on function memory_private.ensure_embedding_indexes(text, integer) from public, anon, authenticated;
grant execute on function memory_private.ensure_embedding_indexes(text, integer) to service_role;

select memory_private.ensure_embedding_indexes('offline-hash-384', 384);

-- Ask for the user's embed job. A queued job already covers the row; a finished one is queued
-- again; a running one is locked (do update locks the row even when its where is false), so this
-- write and the job's final check are ordered and no row is left behind.
create function memory_private.enqueue_embedding(p_user_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
    if not memory_private.setting('job_kinds') ? 'embed' then
        return;
    end if;
    insert into memory_private.jobs as j (kind, payload, dedup_key, user_id, max_attempts)
    values ('embed', '{}', 'embed:' || p_user_id, p_user_id, (memory_private.setting('job_max_attempts'))::integer)
    on conflict (kind, dedup_key) where dedup_key is not null do update
    set status = 'queued', attempts = 0, run_after = now(), last_error = null, failed_at = null, result = null,
        usage = null, worker = null, started_at = null, finished_at = null, created_at = now()
    where j.status in ('done', 'dead');
end
$$;
revoke all on function memory_private.enqueue_embedding(uuid) from public, anon, authenticated;
grant execute on function memory_private.enqueue_embedding(uuid) to service_role;

create function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if tg_op = 'UPDATE' then
        if tg_table_name = 'messages' then
            delete from memory_private.message_embeddings as e where e.message_id = new.id;
        else
            delete from memory_private.memory_embeddings as e where e.memory_id = new.id;
        end if;
    end if;
    perform memory_private.enqueue_embedding(new.user_id);
    return null;
end
$$;
revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;

create trigger messages_embedding_wanted
after insert or update of content on memory.messages
for each row execute function memory_private.embedding_wanted();
create trigger memories_embedding_wanted
after insert or update of content on memory.memories
for each row execute function memory_private.embedding_wanted();

-- The user's rows without a vector of the current model: messages newest first, then memories.
create function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text)
language sql
stable
set search_path = ''
as $$
    (
        select 'message', m.id::text, m.content
        from memory.messages as m
        where m.user_id = p_user_id and not exists (
            select 1 from memory_private.message_embeddings as e
            where e.message_id = m.id and e.model = memory_private.setting('embedding_model') ->> 0
        )
        order by m.id desc
        limit p_limit
    )
    union all
    (
        select 'memory', mm.id::text, mm.content
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null and not exists (
            select 1 from memory_private.memory_embeddings as e
            where e.memory_id = mm.id and e.model = memory_private.setting('embedding_model') ->> 0
        )
        order by mm.created_at desc, mm.id
        limit p_limit
    )
    limit p_limit
$$;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;

-- What an embed job sends to the embeddings server.
create function memory.embedding_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
begin
    if v_job.kind <> 'embed' then
        raise exception using errcode = '22023', message = format('job %s is a %s job, not embed', p_job_id, v_job.kind);
    end if;
    return jsonb_build_object(
        'kind', v_job.kind,
        'model', memory_private.setting('embedding_model') ->> 0,
        'dimensions', (memory_private.setting('embedding_dimensions'))::integer,
        'items', coalesce((
            select jsonb_agg(jsonb_build_object('kind', u.kind, 'id', u.id, 'text', u.content))
            from memory_private.unembedded(v_job.user_id, (memory_private.setting('embedding_batch'))::integer) as u
        ), '[]')
    );
end
$$;

-- Store an embed job's vectors and complete it; queue it again while rows remain. Vectors of
-- another model than the current one (it changed meanwhile) are dropped and the job re-queued.
-- A vector of the wrong dimensions, an unknown kind or a malformed item refuses the whole batch.
create function memory.finish_embeddings(p_job_id bigint, p_worker text, p_model text, p_items jsonb)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_dimensions integer := (memory_private.setting('embedding_dimensions'))::integer;
    v_current boolean := p_model = memory_private.setting('embedding_model') ->> 0;
    v_bad jsonb;
    v_stored integer := 0;
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
        -- Rows deleted since the input was read are skipped by the joins.
        insert into memory_private.message_embeddings as e (message_id, user_id, model, embedding)
        select m.id, m.user_id, p_model, (i.item ->> 'embedding')::extensions.vector
        from jsonb_array_elements(p_items) as i (item)
        join memory.messages as m on m.id::text = i.item ->> 'id' and m.user_id = v_job.user_id
        where i.item ->> 'kind' = 'message'
        on conflict (message_id) do update
        set model = excluded.model, embedding = excluded.embedding, created_at = now();
        get diagnostics v_stored = row_count;
        insert into memory_private.memory_embeddings as e (memory_id, user_id, model, embedding)
        select mm.id, mm.user_id, p_model, (i.item ->> 'embedding')::extensions.vector
        from jsonb_array_elements(p_items) as i (item)
        join memory.memories as mm on mm.id::text = i.item ->> 'id' and mm.user_id = v_job.user_id
        where i.item ->> 'kind' = 'memory'
        on conflict (memory_id) do update
        set model = excluded.model, embedding = excluded.embedding, created_at = now();
        v_stored := v_stored + (select count(*) from jsonb_array_elements(p_items) as i (item)
            join memory.memories as mm on mm.id::text = i.item ->> 'id' and mm.user_id = v_job.user_id
            where i.item ->> 'kind' = 'memory');
    end if;
    -- complete_job takes the job row's lock first, so rows written meanwhile are seen below.
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('stored', v_stored, 'model', p_model));
    if exists (select 1 from memory_private.unembedded(v_job.user_id, 1)) then
        perform memory_private.enqueue_embedding(v_job.user_id);
    end if;
    return jsonb_build_object('stored', v_stored, 'current_model', v_current);
end
$$;

revoke all on function memory.embedding_input(bigint, text) from public, anon, authenticated;
revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public, anon, authenticated;
grant execute on function memory.embedding_input(bigint, text) to service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;

-- Change the embedding model: its indexes are built and every user's rows are re-embedded by
-- the queue; until then search ranks them lexically.
create function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid;
begin
    if p_model is null or p_model !~ '^[[:print:]]{1,200}$' then
        raise exception using errcode = '22023', message = 'model must be 1..200 printable characters';
    end if;
    if p_dimensions is null or p_dimensions < 1 or p_dimensions > 2000 then
        raise exception using errcode = '22023', message = 'dimensions must be 1..2000 (the HNSW limit)';
    end if;
    if memory_private.setting('embedding_model') ->> 0 = p_model
        and (memory_private.setting('embedding_dimensions'))::integer = p_dimensions then
        return;
    end if;
    perform memory_private.ensure_embedding_indexes(p_model, p_dimensions);
    update memory_private.settings set value = to_jsonb(p_model) where key = 'embedding_model';
    update memory_private.settings set value = to_jsonb(p_dimensions) where key = 'embedding_dimensions';
    for v_user in select u.id from memory.users as u loop
        perform memory_private.enqueue_embedding(v_user);
    end loop;
end
$$;
revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
