-- Why: expired rows are already invisible to every read; this deletes them in bounded batches with
-- `skip locked`, so it never holds long locks on hot tables or waits on a writer. With p_user_id it
-- cleans one user's rows (seed 000's cleanup_old_turns). pg_cron runs it through
-- run_retention_sweep, which commits after every batch.
--
-- Each batch returns `resume`, where it stopped in each of its scans (expiry, then id); passed to
-- the next call, that batch starts there instead of walking again past the rows earlier batches
-- deleted and vacuum has not removed yet, so a sweep costs what it deletes. A row it passes over
-- (locked by a writer, or a conversation still holding messages) waits for the next sweep.
create function memory.sweep_expired(
    p_batch_size integer default null, p_user_id uuid default null, p_resume jsonb default null
)
returns table (
    messages_deleted integer, conversations_deleted integer, short_term_deleted integer, resume jsonb
)
language plpgsql
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
    v_nil constant uuid := '00000000-0000-0000-0000-000000000000';
    v_m_at timestamptz := coalesce((p_resume #>> '{m,0}')::timestamptz, '-infinity');
    v_m_id bigint := coalesce((p_resume #>> '{m,1}')::bigint, 0);
    v_c_at timestamptz := coalesce((p_resume #>> '{c,0}')::timestamptz, '-infinity');
    v_c_id uuid := coalesce((p_resume #>> '{c,1}')::uuid, v_nil);
    v_d_at timestamptz := coalesce((p_resume #>> '{d,0}')::timestamptz, '-infinity');
    v_d_id uuid := coalesce((p_resume #>> '{d,1}')::uuid, v_nil);
    v_orphans integer := 0;
    v_last_at timestamptz;
    v_last_m bigint;
    v_last_c uuid;
begin
    if v_batch < 1 then
        raise exception using errcode = '22023', message = 'batch size must be positive';
    end if;
    with expired as (
        select m.id, m.expires_at from memory.messages as m
        where m.expires_at <= now() and (m.expires_at, m.id) > (v_m_at, v_m_id)
            and (p_user_id is null or m.user_id = p_user_id)
        order by m.expires_at, m.id
        limit v_batch
        for update skip locked
    ),
    gone as (
        delete from memory.messages as m using expired where m.id = expired.id
        returning expired.expires_at, expired.id
    )
    select count(*)::integer, max(g.expires_at), (array_agg(g.id order by g.expires_at desc, g.id desc))[1]
    into messages_deleted, v_last_at, v_last_m
    from gone as g;
    if messages_deleted > 0 then
        v_m_at := v_last_at;
        v_m_id := v_last_m;
    end if;

    -- The messages of expired conversations, conversation by conversation; the last one reached
    -- may have more, so the next batch starts at it again.
    if messages_deleted < v_batch then
        with orphaned as (
            select m.id, c.expires_at, c.id as conversation_id from memory.conversations as c
            inner join memory.messages as m on c.id = m.conversation_id
            where c.expires_at <= now() and (c.expires_at, c.id) >= (v_c_at, v_c_id)
                and (p_user_id is null or c.user_id = p_user_id)
            order by c.expires_at, c.id
            limit v_batch - messages_deleted
            for update of m skip locked
        ),
        gone as (
            delete from memory.messages as m using orphaned where m.id = orphaned.id
            returning orphaned.expires_at, orphaned.conversation_id
        )
        select
            count(*)::integer, max(g.expires_at),
            (array_agg(g.conversation_id order by g.expires_at desc, g.conversation_id desc))[1]
        into v_orphans, v_last_at, v_last_c
        from gone as g;
        if v_orphans > 0 then
            v_c_at := v_last_at;
            v_c_id := v_last_c;
        end if;
        messages_deleted := messages_deleted + v_orphans;
    end if;

    -- A conversation goes only once its messages have, so a cascade never turns one bounded batch
    -- into an unbounded delete; while the scan above has more to do, only conversations it has
    -- passed are done with.
    with doomed as (
        select c.id, c.expires_at from memory.conversations as c
        where c.expires_at <= now() and (c.expires_at, c.id) > (v_d_at, v_d_id)
            and (messages_deleted < v_batch or (c.expires_at, c.id) < (v_c_at, v_c_id))
            and (p_user_id is null or c.user_id = p_user_id)
            and not exists (select 1 from memory.messages as m where m.conversation_id = c.id)
        order by c.expires_at, c.id
        limit v_batch
        for update skip locked
    ),
    gone as (
        delete from memory.conversations as c using doomed where c.id = doomed.id
        returning doomed.expires_at, doomed.id
    )
    select count(*)::integer, max(g.expires_at), (array_agg(g.id order by g.expires_at desc, g.id desc))[1]
    into conversations_deleted, v_last_at, v_last_c
    from gone as g;
    if conversations_deleted > 0 then
        v_d_at := v_last_at;
        v_d_id := v_last_c;
    end if;

    with doomed as (
        select s.user_id, s.key from memory.short_term_state as s
        where s.expires_at <= now() and (p_user_id is null or s.user_id = p_user_id)
        limit v_batch
        for update skip locked
    )
    delete from memory.short_term_state as s using doomed
    where s.user_id = doomed.user_id and s.key = doomed.key;
    get diagnostics short_term_deleted = row_count;

    resume := jsonb_build_object(
        'm', jsonb_build_array(v_m_at, v_m_id),
        'c', jsonb_build_array(v_c_at, v_c_id),
        'd', jsonb_build_array(v_d_at, v_d_id)
    );
    return next;
end
$$;

revoke all on function memory.sweep_expired(integer, uuid, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.sweep_expired(integer, uuid, jsonb) to service_role;

-- Why: pg_cron calls this; it commits after every batch so locks and WAL stay small, hands each
-- batch where the last one stopped, and stops when a batch comes back short or after
-- sweep_max_batches. Between batches it pauses for sweep_pause times the batch's own time, as
-- autovacuum's cost delay does: a sweep is background work, and at full speed it took a core
-- from the writers of a two-core server (their p99 2.2x while it ran). An on-demand sweep
-- (supamem.retention, seed 001's cleanup) does not pause. The pauses count against the statement
-- timeout, which covers the whole call (on a hosted project pg_cron's role has two minutes): a run
-- ends before a pause would take it past half the timeout, and the next run sweeps on. A procedure
-- that commits cannot carry a `set search_path` clause, so every name in it is schema-qualified.
create procedure memory_private.run_retention_sweep()
language plpgsql
as $$
declare
    v_batch integer := (memory_private.setting('sweep_batch_size'))::integer;
    v_max integer := (memory_private.setting('sweep_max_batches'))::integer;
    v_pause double precision := memory_private.number_setting('sweep_pause', 0);
    v_done record;
    v_resume jsonb;
    v_began timestamptz := pg_catalog.clock_timestamp();
    v_budget interval := case when pg_catalog.current_setting('statement_timeout') <> '0'
        then pg_catalog.current_setting('statement_timeout')::interval / 2 end;
    v_started timestamptz;
    v_took interval;
    v_batches integer := 0;
    v_messages bigint := 0;
    v_conversations bigint := 0;
    v_short_term bigint := 0;
begin
    for i in 1..v_max loop
        v_started := pg_catalog.clock_timestamp();
        select * into v_done from memory.sweep_expired(v_batch, null, v_resume);
        v_resume := v_done.resume;
        commit;
        v_batches := i;
        v_messages := v_messages + v_done.messages_deleted;
        v_conversations := v_conversations + v_done.conversations_deleted;
        v_short_term := v_short_term + v_done.short_term_deleted;
        exit when greatest(v_done.messages_deleted, v_done.conversations_deleted, v_done.short_term_deleted) < v_batch
            or i = v_max;
        v_took := pg_catalog.clock_timestamp() - v_started;
        exit when pg_catalog.clock_timestamp() - v_began + v_took * v_pause > v_budget;
        perform pg_catalog.pg_sleep(v_pause * extract(epoch from v_took));
    end loop;
    -- Seed 001's cleanup statistics, in the server's log (pg_cron's run history keeps only "CALL").
    raise log 'supamem retention sweep: % messages, % conversations, % short-term rows deleted in % batches, % s',
        v_messages, v_conversations, v_short_term, v_batches,
        round(extract(epoch from pg_catalog.clock_timestamp() - v_began)::numeric, 3);
end
$$;

revoke all on procedure memory_private.run_retention_sweep() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_retention_sweep() to service_role;
