-- The job queue is the service's: anon and signed-in users cannot run the worker functions
-- (claim, lease, complete, fail, release, defer, job_input, finish_*), the stats,
-- the producers and sweeps of memory_private, nor read or write memory_private.jobs (42501).
-- service_role can. The one queue entry point a signed-in user has, compare_year, cannot be
-- side-stepped through its private helper.
begin;
select plan(59);

update memory_private.settings set value = value || '["test_qs_kind"]'::jsonb where key = 'job_kinds';
select tests.create_cast('jobs-security');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;

-- The worker functions, the stats, the backfill, and memory_private's producers and sweeps.
create temporary table queue_calls (name text, call text) on commit drop;
grant select on queue_calls to anon, authenticated;
insert into queue_calls (name, call) values
    ('claim_jobs', $$select * from memory.claim_jobs(array['test_qs_kind'], 'w')$$),
    ('extend_lease', $$select memory.extend_lease(1, 'w')$$),
    ('complete_job', $$select memory.complete_job(1, 'w')$$),
    ('fail_job', $$select memory.fail_job(1, 'w', 'e')$$),
    ('release_job', $$select memory.release_job(1, 'w')$$),
    ('defer_job', $$select memory.defer_job(1, 'w')$$),
    ('job_input', $$select memory.job_input(1, 'w')$$),
    ('finish_extraction', $$select memory.finish_extraction(1, 'w', '[]')$$),
    ('finish_conversation_summary', $$select memory.finish_conversation_summary(1, 'w', 's')$$),
    ('finish_title', $$select memory.finish_title(1, 'w', 't')$$),
    ('finish_weekly_summary', $$select memory.finish_weekly_summary(1, 'w', 's', '{}', '{}')$$),
    ('finish_monthly_summary', $$select memory.finish_monthly_summary(1, 'w', 's', 'c', '{}')$$),
    ('finish_year_comparison', $$select memory.finish_year_comparison(1, 'w', 'c')$$),
    ('job_stats', $$select * from memory.job_stats()$$),
    ('memory_private.enqueue', $$select memory_private.enqueue('test_qs_kind', '{}')$$),
    ('memory_private.hold_lease', $$select memory_private.hold_lease(1, 'w')$$),
    ('memory_private.reap_expired_leases', $$select memory_private.reap_expired_leases()$$),
    ('memory_private.prune_finished_jobs', $$select memory_private.prune_finished_jobs()$$),
    ('memory_private.enqueue_due_weekly_summaries', $$select memory_private.enqueue_due_weekly_summaries()$$),
    ('memory_private.enqueue_due_monthly_summaries', $$select memory_private.enqueue_due_monthly_summaries()$$);

-- anon: none of it (anon has no usage on either schema).
select tests.authenticate_as_anon();
select throws_ok(c.call, '42501', null, 'anon cannot call ' || c.name) from pg_temp.queue_calls as c;
select throws_ok(
    $$select memory.backfill_month(tests.recall('profile')::uuid, 2026, 10)$$, '42501', null, 'anon cannot backfill'
);
select throws_ok($$select * from memory_private.jobs$$, '42501', null, 'anon cannot read the job queue');
select throws_ok($$select * from memory_private.job_stats$$, '42501', null, 'anon cannot read the job stats view');
select throws_ok(
    $$insert into memory_private.jobs (kind, max_attempts) values ('test_qs_kind', 1)$$, '42501', null,
    'anon cannot add to the job queue'
);

-- A signed-in user (the owner, with a profile): none of it either. (They may backfill their own
-- profile: summaries/backfill_and_import_for_the_user.test.sql.)
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(c.call, '42501', null, 'a signed-in user cannot call ' || c.name) from pg_temp.queue_calls as c;
select throws_ok($$select * from memory_private.jobs$$, '42501', null, 'a signed-in user cannot read the job queue');
select throws_ok($$select * from memory_private.job_stats$$, '42501', null, 'a signed-in user cannot read the job stats view');
select throws_ok(
    $$insert into memory_private.jobs (kind, max_attempts, user_id) values ('test_qs_kind', 1, tests.recall('owner')::uuid)$$,
    '42501', null, 'a signed-in user cannot add to the job queue'
);
select throws_ok(
    $$update memory_private.jobs set status = 'done' where user_id = tests.recall('owner')::uuid$$, '42501', null,
    'a signed-in user cannot change the job queue'
);

-- enqueue_year_comparison is granted to authenticated (compare_year calls it), so it checks what
-- compare_year checks: a signed-in user calling it directly cannot queue an LLM job for month 13
-- or for months without both monthly summaries.
do $$
begin
    perform memory_private.enqueue_year_comparison(tests.recall('profile')::uuid, 2026, 13);
    perform memory_private.enqueue_year_comparison(tests.recall('profile')::uuid, 1999, 1);
exception when others then
    null;
end
$$;
select tests.clear_authentication();
select is_empty(
    $$select id from memory_private.jobs where kind = 'compare_year' and user_id = tests.recall('owner')::uuid$$,
    'a signed-in user cannot queue a year comparison that compare_year would refuse'
);

-- service_role runs the queue.
select tests.authenticate_as_service_role();
select lives_ok($$select count(*) from memory_private.jobs$$, 'service_role reads the job queue');
select tests.remember('job', memory_private.enqueue('test_qs_kind', '{"x": 1}', p_user_id => tests.recall('owner')::uuid));
select results_eq(
    $$select id, payload from memory.claim_jobs(array['test_qs_kind'], 'service-worker')$$,
    $$values (tests.recall('job')::bigint, '{"x": 1}'::jsonb)$$,
    'service_role enqueues and claims'
);
select lives_ok(
    $$select memory.extend_lease(tests.recall('job')::bigint, 'service-worker')$$, 'service_role extends a lease'
);
select lives_ok(
    $$select memory.complete_job(tests.recall('job')::bigint, 'service-worker', '{"ok": true}')$$,
    'service_role completes a job'
);
select results_eq(
    $$select queued, running, done_last_hour from memory.job_stats() where kind = 'test_qs_kind'$$,
    $$values (0::bigint, 0::bigint, 1::bigint)$$,
    'service_role reads job_stats'
);
select results_eq(
    $$select queued, running, done_last_hour from memory_private.job_stats where kind = 'test_qs_kind'$$,
    $$values (0::bigint, 0::bigint, 1::bigint)$$,
    'service_role reads the job stats view'
);
select lives_ok($$select memory_private.reap_expired_leases()$$, 'service_role runs the lease reaper');
select lives_ok($$select memory_private.prune_finished_jobs()$$, 'service_role runs the pruning');
select lives_ok(
    $$select memory_private.enqueue_due_weekly_summaries(), memory_private.enqueue_due_monthly_summaries()$$,
    'service_role runs the weekly and monthly schedulers'
);
select results_eq(
    $$select memory.backfill_month(tests.recall('profile')::uuid, 2026, 10)$$,
    array[6],
    'service_role backfills a month (five weeks and the month)'
);

select * from finish();
rollback;
