-- memory_private.schedule_jobs() registers the kit's pg_cron jobs by stable name, so running it
-- any number of times (a migration, a reset, an operator) leaves each job exactly once, with the
-- intended schedule and command. pg_cron never prunes its own run log, so one job does that.
begin;
select plan(12);

select memory_private.schedule_jobs();
select memory_private.schedule_jobs();

select results_eq(
    $$select jobname::text collate "default", count(*)::integer from cron.job
    where jobname in ('supamem-retention-sweep', 'supamem-prune-cron-history') group by jobname order by jobname$$,
    $$values ('supamem-prune-cron-history', 1), ('supamem-retention-sweep', 1)$$,
    'after two runs each job exists exactly once'
);
select is_empty(
    $$select jobname from cron.job where jobname like 'supamem-%' group by jobname having count(*) > 1$$,
    'no supamem job is registered twice'
);

-- The retention sweep: every five minutes, the committing procedure.
select results_eq(
    $$select schedule, command, active from cron.job where jobname = 'supamem-retention-sweep'$$,
    $$values ('*/5 * * * *', 'call memory_private.run_retention_sweep()', true)$$,
    'the retention sweep runs every five minutes and calls run_retention_sweep()'
);
select ok(
    to_regprocedure('memory_private.run_retention_sweep()') is not null,
    'the procedure the sweep job calls exists'
);
select is(
    (select prokind from pg_catalog.pg_proc where oid = to_regprocedure('memory_private.run_retention_sweep()')),
    'p',
    'it is a procedure (so CALL works and it can commit between batches)'
);

-- The pruning of cron.job_run_details: daily, keeping cron_history_retention.
select results_eq(
    $$select schedule, active from cron.job where jobname = 'supamem-prune-cron-history'$$,
    $$values ('17 3 * * *', true)$$,
    'the history pruning runs daily at 03:17'
);
select matches(
    (select command from cron.job where jobname = 'supamem-prune-cron-history'),
    '^delete from cron\.job_run_details\s+where end_time < now\(\) - \(memory_private\.setting\(''cron_history_retention''\) #>> ''\{\}''\)::interval$',
    'the pruning deletes run details older than the cron_history_retention setting'
);
select lives_ok(
    (select command from cron.job where jobname = 'supamem-prune-cron-history'),
    'the pruning command runs'
);

-- The jobs run in this database, as the role that registered them (the migration owner).
select is(
    (select string_agg(distinct format('%s as %s', database, username), ', ')
    from cron.job where jobname in ('supamem-retention-sweep', 'supamem-prune-cron-history')),
    format('%s as %s', current_database(), current_user),
    'both jobs run in this database as the migrating role'
);

-- Re-registering repairs a job someone changed by hand.
select cron.alter_job(
    (select jobid from cron.job where jobname = 'supamem-retention-sweep'), schedule => '0 0 1 1 *', active => false
);
select memory_private.schedule_jobs();
select results_eq(
    $$select schedule from cron.job where jobname = 'supamem-retention-sweep'$$,
    array['*/5 * * * *'],
    're-registering restores the sweep schedule'
);
select results_eq(
    $$select count(*)::integer from cron.job where jobname = 'supamem-retention-sweep'$$,
    array[1],
    're-registering still leaves one sweep job'
);

-- Only service_role (and the owner) may register schedules.
select tests.authenticate_as(tests.create_auth_user('schedules.user@supamem.test'));
select throws_ok($$select memory_private.schedule_jobs()$$, '42501', null, 'a signed-in user cannot register schedules');

select * from finish();
rollback;
