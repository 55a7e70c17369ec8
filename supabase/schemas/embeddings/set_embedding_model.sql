-- Change the embedding model: its indexes are built, the messages are noted for a vector of the
-- new model by a scan, newest first (memory_private.note_for_new_model: the first batches now,
-- the rest before each embed scan), and the users whose memories have no message to bring them a
-- job are queued; the queue re-embeds every row, and until then search ranks them lexically.
-- Users with vector lists are due lists of the new model.
create function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path = ''
as $$
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
    -- Users with vector lists are due lists of the new model (built once its vectors are there);
    -- lists of a model name used again were made from vectors of other dimensions.
    delete from memory_private.vector_list_entries as x
    where exists (select 1 from memory_private.vector_lists as l where l.model = p_model) and x.model = p_model;
    delete from memory_private.vector_lists as l where l.model = p_model;
    insert into memory_private.vector_lists (user_id, model, wanted_at)
    select distinct l.user_id, p_model, now() from memory_private.vector_lists as l;
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
$$;

revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
