-- The scheduled retention sweep pauses after each batch for sweep_pause times the batch's own time
-- (default 1), as autovacuum's cost delay does, so a background sweep leaves the writers their share
-- of the server.
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
    v_started timestamptz;
begin
    for i in 1..v_max loop
        v_started := pg_catalog.clock_timestamp();
        select * into v_done from memory.sweep_expired(v_batch, null, v_resume);
        v_resume := v_done.resume;
        commit;
        exit when greatest(v_done.messages_deleted, v_done.conversations_deleted, v_done.short_term_deleted) < v_batch;
        perform pg_catalog.pg_sleep(v_pause * extract(epoch from pg_catalog.clock_timestamp() - v_started));
    end loop;
end
$procedure$;


revoke all on procedure memory_private.run_retention_sweep() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_retention_sweep() to service_role;

insert into memory_private.settings (key, value, description) values (
    'sweep_pause', '1',
    'After each batch the scheduled sweep pauses for this many times the batch''s own time, so it takes at most '
    'a share of a core from the writers (0: no pause).'
);
