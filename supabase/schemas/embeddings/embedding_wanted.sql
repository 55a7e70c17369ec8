-- An edited message, or a new or edited memory, drops its stale vector and queues its user's embed
-- job; an edited message drops the next message's too, which is embedded with its end. New
-- messages are found by the queue_embeddings scan instead, so a turn writes nothing for embeddings.
-- Security definer: the writer may not touch the vectors or the job queue.
create function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if tg_op = 'UPDATE' then
        if tg_table_name = 'messages' then
            delete from memory_private.message_embeddings as e
            where e.message_id = new.id or e.message_id = (
                select nm.id
                from memory.messages as nm
                where
                    nm.conversation_id = new.conversation_id
                    and (nm.turn_number > new.turn_number or (nm.turn_number = new.turn_number and nm.role < new.role))
                order by nm.turn_number asc, nm.role desc
                limit 1
            );
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

-- Deleting messages (by hand, out of the window, swept, erased) drops the vector of each next
-- message left, which was embedded with the deleted one's end: deleted words do not live on in
-- search. One statement per delete; the user's embed job embeds it again with its new neighbour.
create function memory_private.context_deleted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_users uuid[];
begin
    with dropped as (
        delete from memory_private.message_embeddings as e
        using old_messages as o
        cross join lateral (
            select nm.id
            from memory.messages as nm
            where
                nm.conversation_id = o.conversation_id
                and (nm.turn_number > o.turn_number or (nm.turn_number = o.turn_number and nm.role < o.role))
            order by nm.turn_number asc, nm.role desc
            limit 1
        ) as n
        where e.message_id = n.id
        returning e.user_id
    )
    select array_agg(distinct d.user_id) into v_users from dropped as d;
    perform memory_private.enqueue('embed', '{}', 'embed:' || u.id, u.id, null, true) from unnest(v_users) as u (id);
    return null;
end
$$;

create trigger messages_context_deleted
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.context_deleted();

revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
