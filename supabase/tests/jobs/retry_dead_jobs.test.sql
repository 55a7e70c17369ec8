-- An operator queues the dead letters again once the cause is fixed: those of a kind, those that
-- died since a time, or all; each starts over with all its attempts, and nothing else is touched.
-- The service role's alone.
begin;
select plan(10);

select tests.create_cast('retry-dead');
insert into memory_private.jobs (kind, payload, dedup_key, status, attempts, max_attempts, failed_at, finished_at, last_error)
values
('title', '{}', 'retry-dead:title', 'dead', 5, 5, now() - interval '10 minutes', now() - interval '10 minutes', 'down'),
('extract', '{}', 'retry-dead:extract', 'dead', 5, 5, now() - interval '2 hours', now() - interval '2 hours', 'down'),
('summarize_week', '{}', 'retry-dead:week', 'dead', 5, 5, now() - interval '1 day', now() - interval '1 day', 'down');
insert into memory_private.jobs (kind, payload, dedup_key, status, attempts, max_attempts, finished_at)
values ('title', '{}', 'retry-dead:done', 'done', 1, 5, now());
insert into memory_private.jobs (kind, payload, dedup_key, max_attempts, run_after)
values ('title', '{}', 'retry-dead:queued', 5, now() + interval '1 hour');
-- Only this test's jobs count below.
update memory_private.jobs set status = 'done', finished_at = now() where status = 'dead' and dedup_key not like 'retry-dead:%';

select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select memory.retry_dead_jobs()$$, '42501', null, 'a signed-in user cannot retry jobs');
select tests.authenticate_as_anon();
select throws_ok($$select memory.retry_dead_jobs()$$, '42501', null, 'nor can anon');

select tests.authenticate_as_service_role();
select is(memory.retry_dead_jobs('title'), 1, 'the dead jobs of a kind');
select is(
    (select (status, attempts, last_error, failed_at, finished_at) from memory_private.jobs
    where dedup_key = 'retry-dead:title'),
    row('queued'::text, 0, null::text, null::timestamptz, null::timestamptz),
    'start over with all their attempts'
);
select ok(
    (select run_after <= now() from memory_private.jobs where dedup_key = 'retry-dead:title'), 'and are due now'
);
select is(memory.retry_dead_jobs(p_died_since => now() - interval '3 hours'), 1, 'those that died since a time');
select is(
    (select status from memory_private.jobs where dedup_key = 'retry-dead:week'), 'dead', 'not one that died before it'
);
select is(memory.retry_dead_jobs(), 1, 'or all of them');
select is(memory.retry_dead_jobs(), 0, 'each once');
select is(
    (select array_agg(status || ':' || attempts order by dedup_key) from memory_private.jobs
    where dedup_key in ('retry-dead:done', 'retry-dead:queued')),
    array['done:1', 'queued:0'], 'a finished or queued job is untouched'
);
select tests.clear_authentication();

select * from finish();
rollback;
