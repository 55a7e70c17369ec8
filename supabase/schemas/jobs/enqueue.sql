-- Why: one way in for every producer (triggers, pg_cron, on-demand RPCs; the turns' notes are
-- queued set-based by their passes, under the same keys). With p_replace a finished or dead job
-- of the same key is queued again (regenerating a month); a queued or running one is left alone.
-- Kinds missing from the job_kinds setting are not queued at all.
create function memory_private.enqueue(
    p_kind text,
    p_payload jsonb,
    p_dedup_key text default null,
    p_user_id uuid default null,
    p_run_after timestamptz default null,
    p_replace boolean default false
)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_id bigint;
begin
    if not memory_private.setting('job_kinds') ? p_kind then
        return null;
    end if;
    insert into memory_private.jobs (kind, payload, dedup_key, user_id, run_after, max_attempts)
    values (
        p_kind, coalesce(p_payload, '{}'), p_dedup_key, p_user_id, coalesce(p_run_after, now()),
        (memory_private.setting('job_max_attempts'))::integer
    )
    on conflict (kind, dedup_key) where dedup_key is not null do nothing
    returning id into v_id;
    if v_id is null and p_replace then
        update memory_private.jobs as j
        set status = 'queued', payload = coalesce(p_payload, '{}'), attempts = 0, run_after = coalesce(p_run_after, now()),
            last_error = null, failed_at = null, result = null, usage = null, worker = null, started_at = null,
            finished_at = null, created_at = now()
        -- Found by its key alone: `status in ('done', 'dead')` would let the plan read every finished
        -- job through their partial index instead, filtering for the key; the status check
        -- constraint makes this condition the same.
        where j.kind = p_kind and j.dedup_key = p_dedup_key and j.status not in ('queued', 'running')
        returning j.id into v_id;
    end if;
    return v_id;
end
$$;

revoke all on function memory_private.enqueue(text, jsonb, text, uuid, timestamp with time zone, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue(text, jsonb, text, uuid, timestamp with time zone, boolean)
to service_role;
