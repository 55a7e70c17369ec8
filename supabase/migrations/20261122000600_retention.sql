-- Retention: expired rows are already invisible to every read; this sweep deletes them in bounded
-- batches so it never holds long locks on hot tables, and pg_cron runs it.

-- Why: one bounded batch per table; `skip locked` lets a sweep pass over rows a writer holds
-- instead of waiting on it. With p_user_id it cleans one user's rows (seed 000's cleanup_old_turns).
create function memory.sweep_expired(p_batch_size integer default null, p_user_id uuid default null)
returns table (messages_deleted integer, conversations_deleted integer, short_term_deleted integer)
language plpgsql
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
begin
    if v_batch < 1 then
        raise exception using errcode = '22023', message = 'batch size must be positive';
    end if;
    -- Messages go first: expired ones, and those of an expired conversation (which normally
    -- expired with it). At most two batches' worth per call.
    with expired as (
        select m.id from memory.messages as m
        where m.expires_at <= now() and (p_user_id is null or m.user_id = p_user_id)
        limit v_batch
        for update skip locked
    ),
    orphaned as (
        select m.id from memory.conversations as c
        join memory.messages as m on m.conversation_id = c.id
        where c.expires_at <= now() and (p_user_id is null or c.user_id = p_user_id)
        limit v_batch
        for update of m skip locked
    )
    delete from memory.messages as m
    where m.id in (select e.id from expired as e union select o.id from orphaned as o);
    get diagnostics messages_deleted = row_count;

    -- A conversation goes only once its messages have (in earlier batches), so a cascade never
    -- turns one bounded batch into an unbounded delete.
    with doomed as (
        select c.id from memory.conversations as c
        where c.expires_at <= now() and (p_user_id is null or c.user_id = p_user_id)
            and not exists (select 1 from memory.messages as m where m.conversation_id = c.id)
        limit v_batch
        for update skip locked
    )
    delete from memory.conversations as c using doomed where c.id = doomed.id;
    get diagnostics conversations_deleted = row_count;

    with doomed as (
        select s.user_id, s.key from memory.short_term_state as s
        where s.expires_at <= now() and (p_user_id is null or s.user_id = p_user_id)
        limit v_batch
        for update skip locked
    )
    delete from memory.short_term_state as s using doomed
    where s.user_id = doomed.user_id and s.key = doomed.key;
    get diagnostics short_term_deleted = row_count;
    return next;
end
$$;
grant execute on function memory.sweep_expired(integer, uuid) to service_role;

-- Why: pg_cron calls this; it commits after every batch so locks and WAL stay small, and stops
-- when a batch comes back short or after sweep_max_batches. A procedure that commits cannot carry
-- a `set search_path` clause, so every name in it is schema-qualified.
create procedure memory_private.run_retention_sweep()
language plpgsql
as $$
declare
    v_batch integer := (memory_private.setting('sweep_batch_size'))::integer;
    v_max integer := (memory_private.setting('sweep_max_batches'))::integer;
    v_done record;
begin
    for i in 1..v_max loop
        select * into v_done from memory.sweep_expired(v_batch);
        commit;
        exit when greatest(v_done.messages_deleted, v_done.conversations_deleted, v_done.short_term_deleted) < v_batch;
    end loop;
end
$$;
revoke all on procedure memory_private.run_retention_sweep() from public;
grant execute on procedure memory_private.run_retention_sweep() to service_role;

-- The kit's pg_cron jobs, as data: each feature's migration adds its rows, and a team may
-- retune a schedule with an update followed by memory_private.schedule_jobs().
create table memory_private.schedules (
    name text primary key check (name ~ '^supamem-[a-z-]+$'),
    schedule text not null,
    command text not null
);
alter table memory_private.schedules enable row level security;
grant select, insert, update, delete on memory_private.schedules to service_role;

-- Why: registering must be repeatable (cron.schedule upserts by name), so a migration, a reset or
-- an operator can run this any number of times and still have each job exactly once; a kit job
-- whose row was deleted is unscheduled. It runs as the owner because the cron schema is not the
-- service role's.
create function memory_private.schedule_jobs()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_job memory_private.schedules;
    v_count integer := 0;
begin
    for v_job in select s.* from memory_private.schedules as s order by s.name loop
        perform cron.schedule(v_job.name, v_job.schedule, v_job.command);
        v_count := v_count + 1;
    end loop;
    perform cron.unschedule(j.jobname)
    from cron.job as j
    where j.jobname like 'supamem-%'
        and not exists (select 1 from memory_private.schedules as s where s.name = j.jobname);
    return v_count;
end
$$;
grant execute on function memory_private.schedule_jobs() to service_role;

insert into memory_private.schedules (name, schedule, command) values
('supamem-retention-sweep', '*/5 * * * *', 'call memory_private.run_retention_sweep()'),
-- pg_cron never cleans its own run log.
(
    'supamem-prune-cron-history', '17 3 * * *',
    $job$delete from cron.job_run_details
    where end_time < now() - (memory_private.setting('cron_history_retention') #>> '{}')::interval$job$
);

select memory_private.schedule_jobs();

revoke execute on all routines in schema memory, memory_private from public;
