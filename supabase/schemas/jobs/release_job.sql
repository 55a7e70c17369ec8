-- Why: a worker that stops (SIGTERM) hands back what it holds at once instead of waiting for the
-- lease to run out; the attempt does not count.
create function memory.release_job(p_job_id bigint, p_worker text)
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j
    set status = 'queued', attempts = j.attempts - 1, leased_until = null, worker = null, started_at = null
    where j.id = p_job_id;
end
$$;

revoke all on function memory.release_job(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory.release_job(bigint, text) to service_role;
