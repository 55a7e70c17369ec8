-- Why: registering must be repeatable (cron.schedule upserts by name), so a migration, a reset or
-- an operator can run this any number of times and still have each job exactly once; a kit job
-- whose row was deleted is unscheduled. It runs as the owner because the cron schema is not the
-- service role's.
create function memory_private.schedule_jobs()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_job memory_private.schedules;
    v_count integer := 0;
begin
    for v_job in select s.* from memory_private.schedules as s order by s.name loop
        perform cron.schedule(v_job.name, v_job.schedule, v_job.command);
        v_count := v_count + 1;
    end loop;
    perform cron.unschedule(j.jobname)
    from cron.job as j
    where j.jobname like 'supamem-%'
        and not exists (select 1 from memory_private.schedules as s where s.name = j.jobname);
    return v_count;
end
$$;

revoke all on function memory_private.schedule_jobs() from public, anon, authenticated, service_role;
grant execute on function memory_private.schedule_jobs() to service_role;
