-- Why: every write of a job's outcome goes through here first: the job must still be running
-- under this worker's lease, else the worker lost it (a slow worker whose job was reclaimed) and
-- must write nothing.
create function memory_private.hold_lease(p_job_id bigint, p_worker text)
returns memory_private.jobs
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs;
begin
    select j.* into v_job from memory_private.jobs as j where j.id = p_job_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('job %s not found', p_job_id);
    end if;
    if v_job.status <> 'running' or v_job.worker is distinct from p_worker or v_job.leased_until < now() then
        raise exception using errcode = '55000', message = format('job %s is not leased to %s', p_job_id, p_worker),
            detail = format('status %s, worker %s, lease until %s', v_job.status, v_job.worker, v_job.leased_until);
    end if;
    return v_job;
end
$$;

revoke all on function memory_private.hold_lease(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.hold_lease(bigint, text) to service_role;
