-- New messages are queued for embedding by a scan, not by a trigger on every insert.
--
-- Why: the per-message trigger upserted (and so locked and rewrote) its user's embed job row on
-- every message: add_turn went from about 1,180 to 1,730 µs (two messages a turn), far over the
-- recall issue's 10 % budget. Now a turn writes nothing for embeddings. `memory.queue_embeddings()`
-- reads the messages written since its last run (by id, a bounded range of the primary key) and
-- queues one embed job per user among them; pg_cron runs it every minute, and workers that run
-- embed jobs call it before each claim, so a running worker embeds within a poll. A message whose
-- transaction commits after a scan passed its id is embedded with its user's next one (the embed
-- job takes every row of the user without a vector), and is found lexically until then.
-- Edited messages, and memories (written far less often), keep their triggers.

drop trigger messages_embedding_wanted on memory.messages;
create trigger messages_embedding_wanted
after update of content on memory.messages
for each row execute function memory_private.embedding_wanted();

create table memory_private.embeddings_queued (
    id boolean primary key default true check (id),
    through bigint not null default 0
);
alter table memory_private.embeddings_queued enable row level security;
revoke all on memory_private.embeddings_queued from anon, authenticated, service_role;
insert into memory_private.embeddings_queued (through) select coalesce(max(m.id), 0) from memory.messages as m;
comment on table memory_private.embeddings_queued is
'How far (by message id) new messages have been queued for embedding; one row.';

-- Queue the embed jobs of the users who wrote since the last scan (at most p_batch messages a
-- call); returns how many users. Concurrent calls do not wait: one scans, the others return 0.
create function memory_private.queue_embeddings(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_from bigint;
    v_to bigint;
    v_user uuid;
    v_users integer := 0;
begin
    select q.through into v_from from memory_private.embeddings_queued as q for update skip locked;
    if not found then
        return 0;
    end if;
    select max(n.id) into v_to
    from (select m.id from memory.messages as m where m.id > v_from order by m.id limit p_batch) as n;
    if v_to is null then
        return 0;
    end if;
    for v_user in
        select distinct m.user_id from memory.messages as m where m.id > v_from and m.id <= v_to
    loop
        perform memory_private.enqueue_embedding(v_user);
        v_users := v_users + 1;
    end loop;
    update memory_private.embeddings_queued set through = v_to;
    return v_users;
end
$$;
revoke all on function memory_private.queue_embeddings(integer) from public, anon, authenticated;

create function memory.queue_embeddings()
returns integer
language sql
set search_path = ''
as $$
    select memory_private.queue_embeddings()
$$;
revoke all on function memory.queue_embeddings() from public, anon, authenticated;
grant execute on function memory.queue_embeddings() to service_role;
-- pg_cron runs the body itself; service_role reaches it through the wrapper.
grant execute on function memory_private.queue_embeddings(integer) to service_role;

insert into memory_private.schedules (name, schedule, command) values
('supamem-queue-embeddings', '* * * * *', 'select memory_private.queue_embeddings()');
select memory_private.schedule_jobs();
