-- Why: a job that cannot run yet (a month waiting for its weeks) goes back to the queue without
-- spending an attempt.
create function memory.defer_job(p_job_id bigint, p_worker text, p_delay interval default '30 seconds')
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j
    set status = 'queued', attempts = j.attempts - 1, leased_until = null, worker = null,
        run_after = now() + p_delay
    where j.id = p_job_id;
end
$$;

revoke all on function memory.defer_job(bigint, text, interval) from public, anon, authenticated, service_role;
grant execute on function memory.defer_job(bigint, text, interval) to service_role;
