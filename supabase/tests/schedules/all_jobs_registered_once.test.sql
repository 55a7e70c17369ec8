-- Every row of memory_private.schedules (each feature's migration adds its own) is a pg_cron job,
-- exactly once, with its schedule and command, however often memory_private.schedule_jobs()
-- runs; retuning a row and registering again changes the job in place; a new row is picked up.
-- (schedules/cron_jobs.test.sql covers the retention jobs in detail.)
begin;
select plan(11);

select is(
    memory_private.schedule_jobs(), (select count(*)::integer from memory_private.schedules),
    'schedule_jobs registers every schedule row'
);
select memory_private.schedule_jobs();

select cmp_ok(
    (select count(*)::integer from memory_private.schedules), '>=', 8,
    'the kit''s schedules are all listed (retention, memories, jobs and summaries)'
);
select results_eq(
    $$select jobname::text collate "default", schedule, command from cron.job
    where jobname in (select name from memory_private.schedules) order by 1$$,
    $$select name, schedule, command from memory_private.schedules order by name$$,
    'after two runs, each schedule row is in cron.job exactly once, with its schedule and command'
);
select is_empty(
    $$select jobname from cron.job where jobname::text like 'supamem-%' group by jobname having count(*) > 1$$,
    'no supamem job is registered twice'
);
select is_empty(
    $$select jobname from cron.job where jobname in (select name from memory_private.schedules)
    and (not active or database <> current_database())$$,
    'every job is active and runs in this database'
);
select results_eq(
    $$select jobname::text collate "default", schedule from cron.job
    where jobname in (
        'supamem-reap-leases', 'supamem-prune-jobs', 'supamem-weekly-summaries', 'supamem-monthly-summaries',
        'supamem-queue-extractions', 'supamem-queue-summaries'
    )
    order by 1$$,
    $$values ('supamem-monthly-summaries', '37 * * * *'), ('supamem-prune-jobs', '53 * * * *'),
        ('supamem-queue-extractions', '* * * * *'), ('supamem-queue-summaries', '* * * * *'),
        ('supamem-reap-leases', '* * * * *'),
        ('supamem-weekly-summaries', '7 * * * *')$$,
    'the queue and summary jobs: the reaper and the turns'' notes every minute, pruning and both schedulers hourly'
);

-- Retuning: update the row, register again.
update memory_private.schedules set schedule = '9 4 * * *' where name = 'supamem-prune-jobs';
update memory_private.schedules set command = 'select memory_private.reap_expired_leases() -- retuned'
where name = 'supamem-reap-leases';
select memory_private.schedule_jobs();
select results_eq(
    $$select schedule, count(*) over () from cron.job where jobname = 'supamem-prune-jobs'$$,
    $$values ('9 4 * * *', 1::bigint)$$,
    'a retuned schedule changes the job''s schedule in place'
);
select results_eq(
    $$select command, count(*) over () from cron.job where jobname = 'supamem-reap-leases'$$,
    $$values ('select memory_private.reap_expired_leases() -- retuned', 1::bigint)$$,
    'a changed command changes the job''s command in place'
);

-- A new row is registered by the next run.
insert into memory_private.schedules (name, schedule, command) values ('supamem-test-extra', '0 4 * * *', 'select 1');
select tests.authenticate_as_service_role();
select lives_ok($$select memory_private.schedule_jobs()$$, 'service_role may register the schedules');
select tests.clear_authentication();
select results_eq(
    $$select schedule, command from cron.job where jobname = 'supamem-test-extra'$$,
    $$values ('0 4 * * *', 'select 1')$$,
    'a new schedule row becomes a job'
);
select results_eq(
    $$select jobname::text collate "default", schedule, command from cron.job
    where jobname in (select name from memory_private.schedules) order by 1$$,
    $$select name, schedule, command from memory_private.schedules order by name$$,
    'after the changes, cron.job still mirrors the schedule rows one to one'
);

select * from finish();
rollback;
