-- A schedule row is a command pg_cron runs as the table owner, so no API role writes one: the
-- service role may read the rows but not add, change or remove one; anon and signed-in users
-- reach nothing.
begin;
select plan(7);

select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory_private.schedules (name, schedule, command)
    values ('supamem-escalate', '* * * * *', 'alter role service_role superuser')$$,
    '42501', null, 'service_role cannot add a schedule'
);
select throws_ok(
    $$update memory_private.schedules set command = 'select 1' where name = 'supamem-retention-sweep'$$,
    '42501', null, 'service_role cannot change a schedule''s command'
);
select throws_ok(
    $$delete from memory_private.schedules where name = 'supamem-retention-sweep'$$,
    '42501', null, 'service_role cannot remove a schedule'
);
select isnt_empty(
    $$select name from memory_private.schedules where name = 'supamem-retention-sweep'$$,
    'service_role reads the schedules'
);

select tests.clear_authentication();
select tests.remember('user', tests.create_auth_user('schedules-owner-only.user@supamem.test'));
select tests.authenticate_as(tests.recall('user')::uuid);
select throws_ok(
    $$insert into memory_private.schedules (name, schedule, command) values ('supamem-x', '* * * * *', 'select 1')$$,
    '42501', null, 'a signed-in user cannot add a schedule'
);
select tests.authenticate_as_anon();
select throws_ok(
    $$insert into memory_private.schedules (name, schedule, command) values ('supamem-x', '* * * * *', 'select 1')$$,
    '42501', null, 'anon cannot add a schedule'
);

select tests.clear_authentication();
select results_eq(
    $$select command from memory_private.schedules where name = 'supamem-retention-sweep'$$,
    array['call memory_private.run_retention_sweep()'],
    'the sweep''s command is unchanged'
);

select * from finish();
rollback;
