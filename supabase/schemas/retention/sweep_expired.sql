-- Why: expired rows are already invisible to every read; this deletes them in bounded batches with
-- `skip locked`, so it never holds long locks on hot tables or waits on a writer. With p_user_id it
-- cleans one user's rows (seed 000's cleanup_old_turns). pg_cron runs it through
-- run_retention_sweep, which commits after every batch.
create function memory.sweep_expired(p_batch_size integer default null, p_user_id uuid default null)
returns table (messages_deleted integer, conversations_deleted integer, short_term_deleted integer)
language plpgsql
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
    v_orphans integer;
begin
    if v_batch < 1 then
        raise exception using errcode = '22023', message = 'batch size must be positive';
    end if;
    with expired as (
        select m.id from memory.messages as m
        where m.expires_at <= now() and (p_user_id is null or m.user_id = p_user_id)
        limit v_batch
        for update skip locked
    )
    delete from memory.messages as m using expired where m.id = expired.id;
    get diagnostics messages_deleted = row_count;
    if messages_deleted < v_batch then
        with orphaned as (
            select m.id from memory.conversations as c
            inner join memory.messages as m on c.id = m.conversation_id
            where c.expires_at <= now() and (p_user_id is null or c.user_id = p_user_id)
            limit v_batch - messages_deleted
            for update of m skip locked
        )
        delete from memory.messages as m using orphaned where m.id = orphaned.id;
        get diagnostics v_orphans = row_count;
        messages_deleted := messages_deleted + v_orphans;
    end if;

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

revoke all on function memory.sweep_expired(integer, uuid) from public, anon, authenticated, service_role;
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

revoke all on procedure memory_private.run_retention_sweep() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_retention_sweep() to service_role;
