-- Why: a job dies after its last attempt, and an LLM outage of a few minutes kills every job that
-- ran through it: an extraction's memories, a title, a summary are then never made. The dead
-- letters wait for an operator, who queues them again once the cause is fixed: all of them, those
-- of a kind, or those that died since the outage began. Each starts over with all its attempts;
-- returns how many. The service role's (the jobs are the kit's).
create function memory.retry_dead_jobs(p_kind text default null, p_died_since timestamptz default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_count integer;
begin
    update memory_private.jobs as j
    set status = 'queued', attempts = 0, run_after = now(), last_error = null, failed_at = null, finished_at = null,
        result = null, usage = null, worker = null, leased_until = null, started_at = null
    where j.status = 'dead' and (p_kind is null or j.kind = p_kind)
        and (p_died_since is null or j.failed_at >= p_died_since);
    get diagnostics v_count = row_count;
    return v_count;
end
$$;

revoke all on function memory.retry_dead_jobs(text, timestamptz) from public, anon, authenticated, service_role;
grant execute on function memory.retry_dead_jobs(text, timestamptz) to service_role;
