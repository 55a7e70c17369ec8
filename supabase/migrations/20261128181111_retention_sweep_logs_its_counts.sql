-- Seed 001's cleanup statistics: pg_cron's retention sweep writes what it deleted, in how many
-- batches and how long it took, to the server's log.
set check_function_bodies = off;

create or replace procedure memory_private.run_retention_sweep()
language plpgsql
as $procedure$
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
$procedure$;


revoke all on procedure memory_private.run_retention_sweep() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_retention_sweep() to service_role;
