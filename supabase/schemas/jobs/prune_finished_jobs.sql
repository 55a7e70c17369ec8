-- Why: finished and dead jobs stay for job_retention, for the stats view and for debugging, then go
-- in bounded batches (pg_cron, hourly) so the queue table does not grow without end.
create function memory_private.prune_finished_jobs()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_pruned integer;
begin
    -- One bounded batch per run (finished and dead jobs past job_retention); the schedule repeats.
    delete from memory_private.jobs as j
    where j.id in (
        select x.id from memory_private.jobs as x
        where x.status in ('done', 'dead')
            and x.finished_at < now() - (memory_private.setting('job_retention') #>> '{}')::interval
        limit (memory_private.setting('sweep_batch_size'))::integer
        for update skip locked
    );
    get diagnostics v_pruned = row_count;
    return v_pruned;
end
$$;

revoke all on function memory_private.prune_finished_jobs() from public, anon, authenticated, service_role;
grant execute on function memory_private.prune_finished_jobs() to service_role;
