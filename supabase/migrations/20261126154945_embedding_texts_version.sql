-- embedding_texts gives each text's version (its md5), the one definition the embed job's input
-- and finish compare.
drop function if exists memory_private.embedding_texts(p_user_id uuid, p_message_ids bigint[]);

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

create or replace function memory_private.embedding_texts(p_user_id uuid, p_message_ids bigint[])
returns table (id bigint, content text, version text)
language plpgsql
stable
set search_path to ''
set enable_bitmapscan to 'off'
as $function$
begin
    return query
    select x.id, x.content, md5(x.content)
    from (
        select m.id, coalesce(right(p.content, c.chars) || e'\n', '') || m.content as content
        from memory.messages as m
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral memory_private.message_before(m.conversation_id, m.turn_number, m.role) as p
            on c.chars > 0
        where m.id = any(p_message_ids) and m.user_id = p_user_id
    ) as x;
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text, version text)
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    (
        select 'message', t.id::text, t.content, t.version
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
        select 'memory', mm.id::text, mm.content, md5(mm.content)
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


revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public,
anon,
authenticated,
service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
revoke all on function memory_private.embedding_texts(uuid, bigint[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.embedding_texts(uuid, bigint[]) to service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
