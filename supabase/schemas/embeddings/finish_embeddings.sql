-- Store an embed job's vectors and complete it; queue it again while rows remain. Vectors of
-- another model than the current one (it changed meanwhile), or of a text that changed meanwhile
-- (an item's version, from the input, is its text's md5), are dropped and the job re-queued.
-- An item may carry the server's refusal of its text instead of a vector (`refused`: why): the row
-- keeps it under the model, so one text the server cannot take does not stop the user's others.
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
$$;

revoke all on function memory.finish_embeddings(bigint, text, text, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
