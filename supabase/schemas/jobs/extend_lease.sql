-- Why: a job that outlives its lease (a slow model call) would be reaped and handed to another
-- worker; its worker extends the lease while it works. Only the worker still holding it may.
create function memory.extend_lease(p_job_id bigint, p_worker text, p_lease interval default null)
returns timestamptz
language plpgsql
set search_path = ''
as $$
declare
    v_lease interval := coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval);
    v_until timestamptz;
begin
    -- A worker holds a job for a day at most, as claim_jobs grants it.
    if not v_lease between interval '1 microsecond' and interval '1 day' then
        raise exception using errcode = '22023', message = 'a lease must be longer than 0 and at most a day';
    end if;
    v_until := now() + v_lease;
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j set leased_until = v_until where j.id = p_job_id;
    return v_until;
end
$$;

revoke all on function memory.extend_lease(bigint, text, interval) from public, anon, authenticated, service_role;
grant execute on function memory.extend_lease(bigint, text, interval) to service_role;
