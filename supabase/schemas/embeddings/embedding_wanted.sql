-- An edited message, or a new or edited memory, drops its stale vector and queues its user's embed
-- job. New messages are found by the queue_embeddings scan instead, so a turn writes nothing for
-- embeddings. Security definer: the writer may not touch the vectors or the job queue.
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
    perform memory_private.enqueue('embed', '{}', 'embed:' || new.user_id, new.user_id, null, true);
    return null;
end
$$;

create trigger messages_embedding_wanted
after update of content on memory.messages
for each row execute function memory_private.embedding_wanted();

create trigger memories_embedding_wanted
after insert or update of content on memory.memories
for each row execute function memory_private.embedding_wanted();

revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;
