-- Why: one rule for whether a claimed extraction may ask the model now (seed 004's 60 per user per
-- minute): slots are taken by the last minute's ledger rows and the running jobs, counted in one
-- snapshot under a per-user advisory lock, so two workers never take the user's last slot. Returns
-- null to run now, else when to try again.
create function memory_private.extraction_slot(p_user_id uuid, p_job_id bigint)
returns timestamptz
language plpgsql
set search_path = ''
as $$
declare
    v_limit integer := (memory_private.setting('extraction_rate_limit'))::integer;
    v_recent integer;
    v_running integer;
    v_waiting integer;
    v_line integer;
begin
    if p_user_id is null then
        return null;
    end if;
    perform pg_advisory_xact_lock(hashtextextended('supamem.extraction_slot:' || p_user_id::text, 0));
    -- Taken after the lock, so it sees what the previous holder committed.
    select
        (
            select count(*) from memory.memory_extractions as e
            where e.user_id = p_user_id and e.created_at > now() - interval '1 minute'
        ),
        (
            select count(*) from memory_private.jobs as j
            where j.user_id = p_user_id and j.kind = 'extract' and j.status = 'running' and j.id <> p_job_id
        )
    into v_recent, v_running;
    if v_recent + v_running < v_limit then
        return null;
    end if;
    select count(*) into v_waiting from memory_private.jobs as j
    where j.user_id = p_user_id and j.kind = 'extract' and j.status = 'queued' and j.run_after > now();
    -- How many slots must free before this job fits, queued behind the ones already waiting.
    v_line := v_recent + v_running + v_waiting + 1 - v_limit;
    if v_line <= v_recent then
        return (
            select e.created_at + interval '1 minute' from memory.memory_extractions as e
            where e.user_id = p_user_id and e.created_at > now() - interval '1 minute'
            order by e.created_at
            offset v_line - 1 limit 1
        );
    end if;
    return now() + interval '1 minute' * ceil((v_line - v_recent)::numeric / greatest(v_limit, 1));
end
$$;

revoke all on function memory_private.extraction_slot(uuid, bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.extraction_slot(uuid, bigint) to service_role;
