-- An edited message, or a new or edited memory, drops its stale vector and queues its user's embed
-- job; an edited message drops the next message's too, which is embedded with its end, and notes
-- both for their job (memory_private.pending_embeddings). New messages note themselves and are
-- queued by the minutely scan, so a turn queues no job for embeddings.
-- Security definer: the writer may not touch the vectors, their notes or the job queue.
create function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
-- search. One statement per delete; the message is noted, and the user's embed job embeds it again
-- with its new neighbour.
create function memory_private.context_deleted()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
$$;

create trigger messages_context_deleted
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.context_deleted();

revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
