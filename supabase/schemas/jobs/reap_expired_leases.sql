-- Why: a worker killed mid-job (SIGKILL, OOM, lost host) never completes or fails its job; the
-- reaper (pg_cron, every minute) returns expired leases to the queue, or dead-letters them.
create function memory_private.reap_expired_leases()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_reaped integer;
begin
    update memory_private.jobs as j
    set status = case when j.attempts >= j.max_attempts then 'dead' else 'queued' end,
        last_error = format('lease of worker %s expired at %s', j.worker, j.leased_until),
        failed_at = now(),
        finished_at = case when j.attempts >= j.max_attempts then now() end,
        leased_until = null, worker = null
    where j.id in (
        select x.id from memory_private.jobs as x
        where x.status = 'running' and x.leased_until < now()
        for update skip locked
    );
    get diagnostics v_reaped = row_count;
    return v_reaped;
end
$$;

revoke all on function memory_private.reap_expired_leases() from public, anon, authenticated, service_role;
grant execute on function memory_private.reap_expired_leases() to service_role;
