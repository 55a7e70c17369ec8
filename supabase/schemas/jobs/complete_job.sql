-- Why: the generic completion; result RPCs call it after writing their output in the same
-- transaction. Usage is the LLM's token accounting (seed 004's prompt usage metrics).
create function memory.complete_job(
    p_job_id bigint, p_worker text, p_result jsonb default null, p_usage jsonb default null
)
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j
    set status = 'done', result = p_result, usage = p_usage, finished_at = now(), leased_until = null
    where j.id = p_job_id;
end
$$;

revoke all on function memory.complete_job(bigint, text, jsonb, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.complete_job(bigint, text, jsonb, jsonb) to service_role;
