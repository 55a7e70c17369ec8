-- One function queues a user's embed job (memory_private.queue_embed), for the five producers
-- that each spelled out the same enqueue call.
set check_function_bodies = off;

create or replace function memory_private.queue_embed(p_user_id uuid)
returns bigint
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.enqueue('embed', '{}', 'embed:' || p_user_id, p_user_id, null, true);
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
            select t.id, md5(t.content) as version
            from memory_private.embedding_texts(v_job.user_id, array(select x.id::bigint from items as x)) as t
        ),
        changed as (
            select t.id from items as x join texts as t on t.id = x.id::bigint where x.version <> t.version
        ),
        stored as (
            insert into memory_private.message_embeddings as e (message_id, user_id, model, embedding)
            select t.id, v_job.user_id, p_model, x.embedding::extensions.vector
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
        insert into memory_private.memory_embeddings as e (memory_id, user_id, model, embedding)
        select mm.id, mm.user_id, p_model, (i.item ->> 'embedding')::extensions.vector
        from jsonb_array_elements(p_items) as i (item)
        join memory.memories as mm on mm.id::text = i.item ->> 'id' and mm.user_id = v_job.user_id
        where i.item ->> 'kind' = 'memory' and (i.item ->> 'version' is null or i.item ->> 'version' = md5(mm.content))
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

create or replace function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path to ''
as $function$
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
    insert into memory_private.pending_embeddings (user_id, message_id)
    select m.user_id, m.id from memory.messages as m
    on conflict do nothing;
    for v_user in select u.id from memory.users as u loop
        perform memory_private.queue_embed(v_user);
    end loop;
end
$function$;

create or replace function memory_private.context_deleted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users uuid[];
begin
    -- Users without vectors (embeddings unused, or not yet embedded) have none to drop.
    if not exists (
        select 1 from memory_private.message_embeddings as e
        where e.user_id in (select o.user_id from old_messages as o)
    ) then
        return null;
    end if;
    -- Each deleted message's next one, looked for only up to the next deleted message: a run of
    -- deleted messages (a sweep, a trim) is read once, not once per message.
    with deleted as (
        select o.conversation_id, o.turn_number, o.role,
            lead(o.turn_number) over w as next_turn, lead(o.role) over w as next_role
        from old_messages as o
        window w as (partition by o.conversation_id order by o.turn_number, o.role desc)
    ),
    dropped as (
        delete from memory_private.message_embeddings as e
        using deleted as d
        cross join lateral memory_private.message_after(
            d.conversation_id, d.turn_number, d.role, d.next_turn, d.next_role
        ) as n
        where e.message_id = n.id
        returning e.user_id, e.message_id
    ),
    noted as (
        insert into memory_private.pending_embeddings (user_id, message_id)
        select d.user_id, d.message_id from dropped as d
        on conflict do nothing
    )
    select array_agg(distinct d.user_id) into v_users from dropped as d;
    -- A user whose embed job is queued or running needs no call (enqueue would leave it as it is).
    perform memory_private.queue_embed(u.id)
    from unnest(v_users) as u (id)
    where not exists (
        select 1 from memory_private.jobs as j
        where j.kind = 'embed' and j.dedup_key = 'embed:' || u.id and j.status in ('queued', 'running')
    );
    return null;
end
$function$;

create or replace function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if tg_op = 'UPDATE' then
        if tg_table_name = 'messages' then
            with next as (
                select a.id from memory_private.message_after(new.conversation_id, new.turn_number, new.role) as a
            ),
            dropped as (
                delete from memory_private.message_embeddings as e
                where e.message_id = new.id or e.message_id in (select x.id from next as x)
            )
            insert into memory_private.pending_embeddings (user_id, message_id)
            select new.user_id, new.id
            union all
            select new.user_id, x.id from next as x
            on conflict do nothing;
        else
            delete from memory_private.memory_embeddings as e where e.memory_id = new.id;
        end if;
    end if;
    perform memory_private.queue_embed(new.user_id);
    return null;
end
$function$;

create or replace function memory_private.queue_embeddings()
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users integer;
begin
    if not memory_private.setting('job_kinds') ? 'embed' then
        return 0;
    end if;
    with recursive noted as (
        (select n.user_id from memory_private.pending_embeddings as n order by n.user_id limit 1)
        union all
        select (
            select n.user_id from memory_private.pending_embeddings as n
            where n.user_id > d.user_id
            order by n.user_id
            limit 1
        )
        from noted as d
        where d.user_id is not null
    )
    select count(memory_private.queue_embed(d.user_id))::integer
    into v_users
    from noted as d
    where d.user_id is not null and not exists (
            select 1 from memory_private.jobs as j
            where j.kind = 'embed' and j.dedup_key = 'embed:' || d.user_id
                and (j.status in ('queued', 'running') or j.status = 'dead' and j.failed_at > now() - interval '1 hour')
        );
    return v_users;
end
$function$;


revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public,
anon,
authenticated,
service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;
revoke all on function memory_private.queue_embed(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embed(uuid) to service_role;
revoke all on function memory_private.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings() to service_role;
