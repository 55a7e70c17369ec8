-- memory.retry_dead_jobs (service role): the dead letters queued again once their cause is fixed,
-- those of a kind, those that died since a time, or all, each with all its attempts.

set check_function_bodies = off;

create or replace function memory.retry_dead_jobs(
    p_kind text default null::text, p_died_since timestamp with time zone default null::timestamp with time zone
)
returns integer
language plpgsql
set search_path to ''
as $function$
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
$function$;


revoke all on function memory.retry_dead_jobs(text, timestamp with time zone)
from public, anon, authenticated, service_role;
grant execute on function memory.retry_dead_jobs(text, timestamp with time zone) to service_role;
