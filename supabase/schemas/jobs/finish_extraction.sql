-- Why: the extraction's operations are applied (gate, dedup, history, idempotency) and the job
-- completes in the same transaction; the job was admitted under the rate limit by job_input, so
-- its answer is applied even if the window filled meanwhile (see above).
create function memory.finish_extraction(
    p_job_id bigint, p_worker text, p_operations jsonb, p_usage jsonb default null
)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_result jsonb;
begin
    if v_job.kind <> 'extract' then
        raise exception using errcode = '22023', message = format('job %s is a %s job', p_job_id, v_job.kind);
    end if;
    select coalesce(jsonb_agg(jsonb_build_object('memory_id', r.memory_id, 'outcome', r.outcome)), '[]')
    into v_result
    from memory_private.extract_memories(
        (v_job.payload ->> 'source_message_id')::bigint, p_operations, v_job.user_id, false
    ) as r;
    perform memory.complete_job(p_job_id, p_worker, v_result, p_usage);
    return v_result;
end
$$;

revoke all on function memory.finish_extraction(bigint, text, jsonb, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_extraction(bigint, text, jsonb, jsonb) to service_role;
