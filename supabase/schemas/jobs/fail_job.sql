-- Why: a failed attempt is retried with exponential backoff (or after the provider's
-- Retry-After), and dead-lettered after max_attempts so a poison job cannot loop forever. A final
-- failure (p_final: the provider refused the request itself, and the same request would be refused
-- again) is dead-lettered at once instead of spending its other attempts.
create function memory.fail_job(
    p_job_id bigint, p_worker text, p_error text, p_retry_after interval default null, p_final boolean default false
)
returns text
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    -- Capped in seconds before doubling can overflow an interval (many attempts).
    v_delay interval := coalesce(p_retry_after, make_interval(secs => least(
        extract(epoch from (memory_private.setting('job_backoff_max') #>> '{}')::interval),
        extract(epoch from (memory_private.setting('job_backoff_base') #>> '{}')::interval)
        * power(2::numeric, greatest(v_job.attempts - 1, 0))
    )::double precision));
    v_status text := case when p_final or v_job.attempts >= v_job.max_attempts then 'dead' else 'queued' end;
begin
    update memory_private.jobs as j
    set status = v_status, last_error = left(p_error, 2000), failed_at = now(), leased_until = null, worker = null,
        run_after = case when v_status = 'queued' then now() + v_delay else j.run_after end,
        finished_at = case when v_status = 'dead' then now() end
    where j.id = p_job_id;
    return v_status;
end
$$;

revoke all on function memory.fail_job(bigint, text, text, interval, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory.fail_job(bigint, text, text, interval, boolean) to service_role;
