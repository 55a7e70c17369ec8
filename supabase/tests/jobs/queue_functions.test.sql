-- The job queue (memory_private.jobs) and the functions the workers call: enqueue dedups by kind
-- and key (p_replace requeues only finished or dead jobs); claim_jobs takes due jobs of the given
-- kinds (and, with p_user_ids, users) under a lease, never twice; extend_lease / complete_job /
-- fail_job / release_job / defer_job act only for the lease holder; fail_job backs off
-- exponentially and dead-letters;
-- the reaper returns expired leases; pruning deletes old finished jobs in bounded batches;
-- job_stats reports per kind.
--
-- The shared queue holds other tests' jobs, so every job here has a kind of its own
-- ('test_qf_...', 'test_kind_x'): claims, assertions and stats only ever see this file's jobs.
-- Time is frozen (now() is the transaction's start); a lease "expires" by setting leased_until in
-- the past, and a retry "becomes due" by setting run_after to now(), both as postgres.
begin;
select plan(75);

-- The settings this file depends on, set explicitly.
update memory_private.settings set value = '"10 seconds"' where key = 'job_backoff_base';
update memory_private.settings set value = '"1 hour"' where key = 'job_backoff_max';
update memory_private.settings set value = '"5 minutes"' where key = 'job_lease';
update memory_private.settings set value = '5' where key = 'job_max_attempts';
-- Only kinds listed in job_kinds are queued at all; this file's kinds are its own.
update memory_private.settings set value = value || '[
    "test_qf_dedup", "test_qf_dedup_other", "test_qf_nokey", "test_qf_replace_queued", "test_qf_replace_running",
    "test_qf_replace_done", "test_qf_replace_dead", "test_qf_claim", "test_qf_claim_other", "test_qf_claim_users",
    "test_qf_backoff", "test_qf_backoff_cap", "test_qf_backoff_overflow", "test_qf_dead", "test_qf_final", "test_qf_release",
    "test_qf_defer", "test_qf_reap", "test_qf_prune", "test_kind_x", "test_kind_y"
]'::jsonb
where key = 'job_kinds';

-------------------------------------------------------------------------------------------------
-- enqueue: one job per kind and dedup key.
-------------------------------------------------------------------------------------------------
select tests.authenticate_as_service_role();
select tests.remember('dedup', memory_private.enqueue('test_qf_dedup', '{"n": 1}', 'key-1'));
select isnt(tests.recall('dedup')::bigint, null, 'enqueue returns the new job''s id');
select is(
    memory_private.enqueue('test_qf_dedup', '{"n": 2}', 'key-1'), null,
    'enqueueing the same kind and key again returns null'
);
select results_eq(
    $$select id, status, payload ->> 'n' from memory_private.jobs where kind = 'test_qf_dedup' and dedup_key = 'key-1'$$,
    $$values (tests.recall('dedup')::bigint, 'queued', '1')$$,
    'there is one job for the kind and key, with the first payload'
);
select isnt(
    memory_private.enqueue('test_qf_dedup_other', '{}', 'key-1'), null,
    'the same key under another kind is another job'
);
select memory_private.enqueue('test_qf_nokey', '{}');
select memory_private.enqueue('test_qf_nokey', '{}');
select results_eq(
    $$select count(*)::integer from memory_private.jobs where kind = 'test_qf_nokey'$$,
    array[2],
    'jobs without a dedup key are never merged'
);

-- p_replace: a queued or running job is left alone; a done or dead one is queued again.
select tests.remember('rq', memory_private.enqueue('test_qf_replace_queued', '{"v": "old"}', 'r'));
select is(
    memory_private.enqueue('test_qf_replace_queued', '{"v": "new"}', 'r', p_replace => true), null,
    'p_replace on a queued job returns null'
);
select results_eq(
    $$select status, payload ->> 'v' from memory_private.jobs where id = tests.recall('rq')::bigint$$,
    $$values ('queued', 'old')$$,
    'the queued job keeps its payload'
);
select tests.remember('rr', memory_private.enqueue('test_qf_replace_running', '{"v": "old"}', 'r'));
select memory.claim_jobs(array['test_qf_replace_running'], 'replace-worker');
select is(
    memory_private.enqueue('test_qf_replace_running', '{"v": "new"}', 'r', p_replace => true), null,
    'p_replace on a running job returns null'
);
select results_eq(
    $$select status, worker, attempts, payload ->> 'v' from memory_private.jobs where id = tests.recall('rr')::bigint$$,
    $$values ('running', 'replace-worker', 1, 'old')$$,
    'the running job stays with its worker, attempt and payload'
);
select tests.remember('rd', memory_private.enqueue('test_qf_replace_done', '{"v": "old"}', 'r'));
select tests.remember('rx', memory_private.enqueue('test_qf_replace_dead', '{"v": "old"}', 'r'));
select tests.clear_authentication();
update memory_private.jobs
set status = 'done', attempts = 2, worker = 'w', started_at = now(), finished_at = now(), result = '{"r": 1}', usage = '{"total_tokens": 1}'
where id = tests.recall('rd')::bigint;
update memory_private.jobs
set status = 'dead', attempts = 5, last_error = 'boom', failed_at = now(), finished_at = now()
where id = tests.recall('rx')::bigint;
select tests.authenticate_as_service_role();
select is(
    memory_private.enqueue('test_qf_replace_done', '{"v": "new"}', 'r', p_replace => true),
    tests.recall('rd')::bigint,
    'p_replace on a done job returns that job''s id'
);
select results_eq(
    $$select status, attempts, payload ->> 'v', result, usage, worker, started_at, finished_at
    from memory_private.jobs where id = tests.recall('rd')::bigint$$,
    $$values ('queued', 0, 'new', null::jsonb, null::jsonb, null::text, null::timestamptz, null::timestamptz)$$,
    'the done job is queued again with the new payload, no attempts and no outcome'
);
select is(
    memory_private.enqueue('test_qf_replace_dead', '{"v": "new"}', 'r', p_replace => true),
    tests.recall('rx')::bigint,
    'p_replace on a dead job returns that job''s id'
);
select results_eq(
    $$select status, attempts, payload ->> 'v', last_error, finished_at from memory_private.jobs where id = tests.recall('rx')::bigint$$,
    $$values ('queued', 0, 'new', null::text, null::timestamptz)$$,
    'the dead job is queued again, its error cleared'
);

-------------------------------------------------------------------------------------------------
-- claim_jobs: the given kinds, due jobs only, under a lease, at most p_limit, never twice.
-------------------------------------------------------------------------------------------------
select tests.remember('a1', memory_private.enqueue('test_qf_claim', '{"n": 1}', p_run_after => now() - interval '3 minutes'));
select tests.remember('a2', memory_private.enqueue('test_qf_claim', '{"n": 2}', p_run_after => now() - interval '2 minutes'));
select tests.remember('a3', memory_private.enqueue('test_qf_claim', '{"n": 3}', p_run_after => now() - interval '1 minute'));
select tests.remember('later', memory_private.enqueue('test_qf_claim', '{"n": 4}', p_run_after => now() + interval '1 minute'));
select tests.remember('other', memory_private.enqueue('test_qf_claim_other', '{}'));

select tests.remember('claim1', (select array_agg(c.id order by c.id) from memory.claim_jobs(
    array['test_qf_claim'], 'worker-1', 2, interval '2 minutes') as c));
select is(
    tests.recall('claim1')::bigint[], array[tests.recall('a1')::bigint, tests.recall('a2')::bigint],
    'a claim with limit 2 takes the two longest-due jobs of the kind'
);
select results_eq(
    $$select id, status, attempts, worker, started_at, leased_until from memory_private.jobs
    where id in (tests.recall('a1')::bigint, tests.recall('a2')::bigint) order by id$$,
    $$values
    (tests.recall('a1')::bigint, 'running', 1, 'worker-1', now(), now() + interval '2 minutes'),
    (tests.recall('a2')::bigint, 'running', 1, 'worker-1', now(), now() + interval '2 minutes')$$,
    'claimed jobs are running, attempt 1, under the worker''s lease of the given length'
);
select results_eq(
    $$select id from memory.claim_jobs(array['test_qf_claim'], 'worker-2', 10)$$,
    $$values (tests.recall('a3')::bigint)$$,
    'the next claim gets only the remaining due job: running, future and other kinds are not taken'
);
select is_empty(
    $$select id from memory.claim_jobs(array['test_qf_claim'], 'worker-3', 10)$$,
    'once every due job is running, a claim returns nothing'
);
select tests.clear_authentication();
update memory_private.jobs set run_after = now() where id = tests.recall('later')::bigint;
select tests.authenticate_as_service_role();
select results_eq(
    $$select id from memory.claim_jobs(array['test_qf_claim'], 'worker-3', 10)$$,
    $$values (tests.recall('later')::bigint)$$,
    'a job is claimable once its run_after is reached (run_after <= now())'
);
select results_eq(
    $$select id, kind, attempts, leased_until from memory.claim_jobs(array['test_qf_nothing', 'test_qf_claim_other'], 'worker-4')$$,
    $$values (tests.recall('other')::bigint, 'test_qf_claim_other', 1, now() + interval '5 minutes')$$,
    'a claim of several kinds takes the job of the other kind, with the default lease (job_lease)'
);
select tests.remember('user_1', memory.user_id_for('jobs-queue-functions.user-1'));
select tests.remember('user_2', memory.user_id_for('jobs-queue-functions.user-2'));
select memory_private.enqueue('test_qf_claim_users', '{}', p_user_id => tests.recall('user_1')::uuid, p_run_after => now() - interval '1 minute');
select tests.remember('user_2_job', memory_private.enqueue('test_qf_claim_users', '{}', p_user_id => tests.recall('user_2')::uuid));
select results_eq(
    $$select id, user_id from memory.claim_jobs(array['test_qf_claim_users'], 'worker-5', 10, p_user_ids => array[tests.recall('user_2')::uuid])$$,
    $$values (tests.recall('user_2_job')::bigint, tests.recall('user_2')::uuid)$$,
    'p_user_ids keeps a claim to those users'' jobs, even when another user''s job is older'
);

-- Refusals.
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], '')$$, '22023', null, 'an empty worker name is refused'
);
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], '   ')$$, '22023', null, 'a blank worker name is refused'
);
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], null)$$, '22023', null, 'a null worker name is refused'
);
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], 'w', 0)$$, '22023', null, 'limit 0 is refused'
);
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], 'w', 101)$$, '22023', null, 'limit 101 is refused'
);
select lives_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], 'w', 100)$$, 'limit 100 is accepted'
);
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], 'w', 1, interval '0 seconds')$$, '22023', null,
    'a zero lease is refused'
);
select throws_ok(
    $$select * from memory.claim_jobs(array['test_qf_claim'], 'w', 1, interval '-1 minute')$$, '22023', null,
    'a negative lease is refused'
);

-------------------------------------------------------------------------------------------------
-- extend_lease and complete_job: only the holder of a live lease.
-------------------------------------------------------------------------------------------------
select is(
    memory.extend_lease(tests.recall('a1')::bigint, 'worker-1', interval '10 minutes'),
    now() + interval '10 minutes',
    'the holder extends its lease and gets the new end'
);
select is(
    (select leased_until from memory_private.jobs where id = tests.recall('a1')::bigint),
    now() + interval '10 minutes',
    'the job''s lease is extended'
);
select throws_ok(
    $$select memory.extend_lease(tests.recall('a1')::bigint, 'worker-2', interval '10 minutes')$$, '55000', null,
    'another worker cannot extend the lease'
);
select tests.clear_authentication();
update memory_private.jobs set leased_until = now() - interval '1 second' where id = tests.recall('a2')::bigint;
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.extend_lease(tests.recall('a2')::bigint, 'worker-1')$$, '55000', null,
    'an expired lease cannot be extended'
);

select lives_ok(
    $$select memory.complete_job(tests.recall('a1')::bigint, 'worker-1', '{"ok": true}', '{"total_tokens": 42}')$$,
    'the holder completes its job'
);
select results_eq(
    $$select status, result, usage, finished_at, leased_until from memory_private.jobs where id = tests.recall('a1')::bigint$$,
    $$values ('done', '{"ok": true}'::jsonb, '{"total_tokens": 42}'::jsonb, now(), null::timestamptz)$$,
    'a completed job is done, with its result, usage and finish time, and no lease'
);
select throws_ok(
    $$select memory.complete_job(tests.recall('a1')::bigint, 'worker-1')$$, '55000', null,
    'a done job cannot be completed again'
);
select throws_ok(
    $$select memory.complete_job(tests.recall('a3')::bigint, 'worker-1', '{"stolen": true}')$$, '55000', null,
    'another worker cannot complete the job'
);
select throws_ok(
    $$select memory.complete_job(tests.recall('a2')::bigint, 'worker-1', '{"late": true}')$$, '55000', null,
    'the holder cannot complete after its lease expired'
);
select results_eq(
    $$select id, status, result from memory_private.jobs where id in (tests.recall('a2')::bigint, tests.recall('a3')::bigint) order by id$$,
    $$values (tests.recall('a2')::bigint, 'running', null::jsonb), (tests.recall('a3')::bigint, 'running', null::jsonb)$$,
    'refused completions wrote nothing'
);
select throws_ok(
    $$select memory.complete_job(-1, 'worker-1')$$, 'P0002', null, 'completing a job that does not exist: P0002'
);

-------------------------------------------------------------------------------------------------
-- fail_job: exponential backoff from job_backoff_base, capped by job_backoff_max, Retry-After
-- overrides, dead after max_attempts.
-------------------------------------------------------------------------------------------------
select tests.remember('fb', memory_private.enqueue('test_qf_backoff', '{}'));
select memory.claim_jobs(array['test_qf_backoff'], 'fail-worker');
select throws_ok(
    $$select memory.fail_job(tests.recall('fb')::bigint, 'other-worker', 'not mine')$$, '55000', null,
    'another worker cannot fail the job'
);
select is(
    memory.fail_job(tests.recall('fb')::bigint, 'fail-worker', repeat('x', 5000)), 'queued',
    'a first failure queues the job again'
);
select results_eq(
    $$select status, attempts, run_after - now(), failed_at, length(last_error), worker, leased_until
    from memory_private.jobs where id = tests.recall('fb')::bigint$$,
    $$values ('queued', 1, interval '10 seconds', now(), 2000, null::text, null::timestamptz)$$,
    'after attempt 1: retried in 10 s (the base), failed_at set, the error kept to 2000 characters, no worker'
);
select is_empty(
    $$select id from memory.claim_jobs(array['test_qf_backoff'], 'fail-worker')$$,
    'a job waiting for its retry is not claimable'
);
select tests.clear_authentication();
update memory_private.jobs set run_after = now() where id = tests.recall('fb')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_backoff'], 'fail-worker');
select memory.fail_job(tests.recall('fb')::bigint, 'fail-worker', 'second');
select results_eq(
    $$select attempts, run_after - now(), last_error from memory_private.jobs where id = tests.recall('fb')::bigint$$,
    $$values (2, interval '20 seconds', 'second')$$,
    'after attempt 2: retried in 20 s'
);
select tests.clear_authentication();
update memory_private.jobs set run_after = now() where id = tests.recall('fb')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_backoff'], 'fail-worker');
select memory.fail_job(tests.recall('fb')::bigint, 'fail-worker', 'third');
select results_eq(
    $$select attempts, run_after - now() from memory_private.jobs where id = tests.recall('fb')::bigint$$,
    $$values (3, interval '40 seconds')$$,
    'after attempt 3: retried in 40 s'
);
select tests.clear_authentication();
update memory_private.jobs set run_after = now() where id = tests.recall('fb')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_backoff'], 'fail-worker');
select memory.fail_job(tests.recall('fb')::bigint, 'fail-worker', 'rate limited', interval '7 minutes');
select results_eq(
    $$select attempts, run_after - now() from memory_private.jobs where id = tests.recall('fb')::bigint$$,
    $$values (4, interval '7 minutes')$$,
    'a Retry-After (p_retry_after) replaces the backoff'
);

-- The cap: attempt 10 would wait 10 s * 2^9 = 5120 s; job_backoff_max is 1 hour.
select tests.remember('fc', memory_private.enqueue('test_qf_backoff_cap', '{}'));
select tests.clear_authentication();
update memory_private.jobs set attempts = 9, max_attempts = 20 where id = tests.recall('fc')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_backoff_cap'], 'fail-worker');
select memory.fail_job(tests.recall('fc')::bigint, 'fail-worker', 'again');
select results_eq(
    $$select status, attempts, run_after - now() from memory_private.jobs where id = tests.recall('fc')::bigint$$,
    $$values ('queued', 10, interval '1 hour')$$,
    'the backoff is capped by job_backoff_max'
);
-- The backoff is capped before base * 2^(attempts - 1) can overflow an interval: at attempt 41
-- and beyond (with a 10 s base) fail_job still retries in an hour.
select tests.remember('fo', memory_private.enqueue('test_qf_backoff_overflow', '{}'));
select tests.clear_authentication();
update memory_private.jobs set attempts = 59, max_attempts = 100 where id = tests.recall('fo')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_backoff_overflow'], 'fail-worker');
select lives_ok(
    $$select memory.fail_job(tests.recall('fo')::bigint, 'fail-worker', 'again')$$,
    'fail_job works at any attempt number (the cap applies before the doubling overflows)'
);
select results_eq(
    $$select status, run_after - now() from memory_private.jobs where id = tests.recall('fo')::bigint$$,
    $$values ('queued', interval '1 hour')$$,
    'attempt 60 of 100 is retried after job_backoff_max'
);

-- Dead after max_attempts.
select tests.remember('fd', memory_private.enqueue('test_qf_dead', '{}'));
select tests.clear_authentication();
update memory_private.jobs set max_attempts = 2, run_after = now() - interval '1 minute' where id = tests.recall('fd')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_dead'], 'fail-worker');
select is(memory.fail_job(tests.recall('fd')::bigint, 'fail-worker', 'first'), 'queued', 'attempt 1 of 2 fails: queued');
select tests.clear_authentication();
update memory_private.jobs set run_after = now() - interval '1 minute' where id = tests.recall('fd')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_dead'], 'fail-worker');
select is(memory.fail_job(tests.recall('fd')::bigint, 'fail-worker', 'second'), 'dead', 'attempt 2 of 2 fails: dead');
select results_eq(
    $$select status, attempts, last_error, failed_at, finished_at, run_after, leased_until, worker
    from memory_private.jobs where id = tests.recall('fd')::bigint$$,
    $$values ('dead', 2, 'second', now(), now(), now() - interval '1 minute', null::timestamptz, null::text)$$,
    'a dead job keeps its last error, is finished, and gets no new run_after'
);

-- A final failure (the provider refused the request itself) is dead at its first attempt of 5.
select tests.remember('ff', memory_private.enqueue('test_qf_final', '{}'));
select tests.clear_authentication();
update memory_private.jobs set run_after = now() - interval '1 minute' where id = tests.recall('ff')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_final'], 'fail-worker');
select is(
    memory.fail_job(tests.recall('ff')::bigint, 'fail-worker', 'HTTP 400', p_final => true), 'dead',
    'a final failure is dead at once'
);
select results_eq(
    $$select status, attempts, max_attempts, finished_at from memory_private.jobs where id = tests.recall('ff')::bigint$$,
    $$values ('dead', 1, 5, now())$$,
    'with its other attempts unspent'
);
select is_empty(
    $$select id from memory.claim_jobs(array['test_qf_dead'], 'fail-worker')$$,
    'a dead job is never claimed again'
);

-------------------------------------------------------------------------------------------------
-- release_job gives the attempt back; defer_job requeues for later without spending one.
-------------------------------------------------------------------------------------------------
select tests.remember('rl', memory_private.enqueue('test_qf_release', '{}'));
select memory.claim_jobs(array['test_qf_release'], 'stopping-worker');
select throws_ok(
    $$select memory.release_job(tests.recall('rl')::bigint, 'other-worker')$$, '55000', null,
    'another worker cannot release the job'
);
select lives_ok(
    $$select memory.release_job(tests.recall('rl')::bigint, 'stopping-worker')$$, 'the holder releases its job'
);
select results_eq(
    $$select status, attempts, worker, leased_until, started_at from memory_private.jobs where id = tests.recall('rl')::bigint$$,
    $$values ('queued', 0, null::text, null::timestamptz, null::timestamptz)$$,
    'a released job is queued with its attempt given back'
);
select results_eq(
    $$select id, attempts from memory.claim_jobs(array['test_qf_release'], 'next-worker')$$,
    $$values (tests.recall('rl')::bigint, 1)$$,
    'a released job is claimable at once, as attempt 1'
);

select tests.remember('df', memory_private.enqueue('test_qf_defer', '{}'));
select memory.claim_jobs(array['test_qf_defer'], 'month-worker');
select throws_ok(
    $$select memory.defer_job(tests.recall('df')::bigint, 'other-worker')$$, '55000', null,
    'another worker cannot defer the job'
);
select memory.defer_job(tests.recall('df')::bigint, 'month-worker', interval '5 minutes');
select results_eq(
    $$select status, attempts, run_after - now(), worker, leased_until from memory_private.jobs where id = tests.recall('df')::bigint$$,
    $$values ('queued', 0, interval '5 minutes', null::text, null::timestamptz)$$,
    'a deferred job is queued for later and spent no attempt'
);
select is_empty(
    $$select id from memory.claim_jobs(array['test_qf_defer'], 'month-worker')$$,
    'a deferred job is not claimable before its delay'
);

-------------------------------------------------------------------------------------------------
-- reap_expired_leases: expired running jobs go back to the queue (or die at max attempts);
-- live leases are left alone.
-------------------------------------------------------------------------------------------------
select tests.remember('rp1', memory_private.enqueue('test_qf_reap', '{"n": 1}'));
select tests.remember('rp2', memory_private.enqueue('test_qf_reap', '{"n": 2}'));
select tests.remember('rp3', memory_private.enqueue('test_qf_reap', '{"n": 3}'));
select tests.clear_authentication();
update memory_private.jobs set max_attempts = 1 where id = tests.recall('rp2')::bigint;
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['test_qf_reap'], 'killed-worker', 3);
select tests.clear_authentication();
update memory_private.jobs set leased_until = now() - interval '1 second'
where id in (tests.recall('rp1')::bigint, tests.recall('rp2')::bigint);
select tests.authenticate_as_service_role();
select cmp_ok(memory_private.reap_expired_leases(), '>=', 2, 'the reaper reports the expired leases it returned');
select results_eq(
    $$select status, attempts, worker, leased_until, failed_at, last_error like 'lease of worker killed-worker expired at %'
    from memory_private.jobs where id = tests.recall('rp1')::bigint$$,
    $$values ('queued', 1, null::text, null::timestamptz, now(), true)$$,
    'an expired lease is returned to the queue, with the reason as its error'
);
select results_eq(
    $$select status, finished_at, failed_at from memory_private.jobs where id = tests.recall('rp2')::bigint$$,
    $$values ('dead', now(), now())$$,
    'an expired lease at max attempts is dead-lettered'
);
select results_eq(
    $$select status, worker, leased_until from memory_private.jobs where id = tests.recall('rp3')::bigint$$,
    $$values ('running', 'killed-worker', now() + interval '5 minutes')$$,
    'a live lease is left alone'
);
select throws_ok(
    $$select memory.complete_job(tests.recall('rp1')::bigint, 'killed-worker')$$, '55000', null,
    'the worker that lost a reaped job cannot complete it'
);

-------------------------------------------------------------------------------------------------
-- prune_finished_jobs: done and dead jobs older than job_retention, one bounded batch per call.
-- A retention of 10000 days makes this file's 27-year-old jobs the only ones old enough, so the
-- batch of 1 can only take one of them.
-------------------------------------------------------------------------------------------------
select tests.remember('p_done', memory_private.enqueue('test_qf_prune', '{"p": "old done"}'));
select tests.remember('p_dead', memory_private.enqueue('test_qf_prune', '{"p": "old dead"}'));
select tests.remember('p_young', memory_private.enqueue('test_qf_prune', '{"p": "young done"}'));
select tests.remember('p_queued', memory_private.enqueue('test_qf_prune', '{"p": "old queued"}'));
select tests.clear_authentication();
update memory_private.settings set value = '1' where key = 'sweep_batch_size';
update memory_private.settings set value = '"10000 days"' where key = 'job_retention';
update memory_private.jobs set status = 'done', finished_at = now() - interval '10001 days' where id = tests.recall('p_done')::bigint;
update memory_private.jobs set status = 'dead', finished_at = now() - interval '10001 days' where id = tests.recall('p_dead')::bigint;
update memory_private.jobs set status = 'done', finished_at = now() - interval '9999 days' where id = tests.recall('p_young')::bigint;
update memory_private.jobs set created_at = now() - interval '10001 days', run_after = now() - interval '10001 days'
where id = tests.recall('p_queued')::bigint;
select tests.authenticate_as_service_role();
select is(memory_private.prune_finished_jobs(), 1, 'a batch of 1 prunes one job');
select results_eq(
    $$select count(*)::integer from memory_private.jobs where id in (tests.recall('p_done')::bigint, tests.recall('p_dead')::bigint)$$,
    array[1],
    'one of the two old finished jobs is left after the first batch'
);
select is(memory_private.prune_finished_jobs(), 1, 'the next batch prunes the other');
select is_empty(
    $$select id from memory_private.jobs where id in (tests.recall('p_done')::bigint, tests.recall('p_dead')::bigint)$$,
    'old done and dead jobs are gone'
);
select is(memory_private.prune_finished_jobs(), 0, 'then nothing is old enough');
select results_eq(
    $$select id from memory_private.jobs where id in (tests.recall('p_young')::bigint, tests.recall('p_queued')::bigint) order by id$$,
    $$values (tests.recall('p_young')::bigint), (tests.recall('p_queued')::bigint)$$,
    'a job finished within job_retention and an old queued job are kept'
);

-------------------------------------------------------------------------------------------------
-- job_stats: counts, age, retries, latency and tokens for one kind.
-------------------------------------------------------------------------------------------------
select tests.remember('s_q1', memory_private.enqueue('test_kind_x', '{}'));
select tests.remember('s_q2', memory_private.enqueue('test_kind_x', '{}'));
select tests.remember('s_r', memory_private.enqueue('test_kind_x', '{}'));
select tests.remember('s_dead', memory_private.enqueue('test_kind_x', '{}'));
select tests.remember('s_c1', memory_private.enqueue('test_kind_x', '{}'));
select tests.remember('s_c2', memory_private.enqueue('test_kind_x', '{}'));
select tests.remember('s_old', memory_private.enqueue('test_kind_x', '{}'));
select memory.claim_jobs(array['test_kind_x'], 'stats-worker', 7);
select tests.clear_authentication();
update memory_private.jobs set status = 'queued', leased_until = null, worker = null, created_at = now() - interval '5 minutes'
where id = tests.recall('s_q1')::bigint;
update memory_private.jobs set status = 'queued', leased_until = null, worker = null, created_at = now() - interval '1 minute'
where id = tests.recall('s_q2')::bigint;
update memory_private.jobs set status = 'dead', leased_until = null, failed_at = now() - interval '10 minutes', finished_at = now() - interval '10 minutes'
where id = tests.recall('s_dead')::bigint;
-- Latencies (finished_at - created_at) of 10 s and 30 s; the first one had failed once.
update memory_private.jobs set status = 'done', leased_until = null, created_at = now() - interval '40 seconds',
    finished_at = now() - interval '30 seconds', failed_at = now() - interval '35 seconds', usage = '{"total_tokens": 100}'
where id = tests.recall('s_c1')::bigint;
update memory_private.jobs set status = 'done', leased_until = null, created_at = now() - interval '60 seconds',
    finished_at = now() - interval '30 seconds', usage = '{"total_tokens": 50}'
where id = tests.recall('s_c2')::bigint;
-- Finished two hours ago: not part of the last hour's figures.
update memory_private.jobs set status = 'done', leased_until = null, created_at = now() - interval '3 hours',
    finished_at = now() - interval '2 hours', failed_at = now() - interval '150 minutes', usage = '{"total_tokens": 1000}'
where id = tests.recall('s_old')::bigint;
select tests.authenticate_as_service_role();
select results_eq(
    $$select queued, running, dead, done_last_hour, oldest_queued_age, retries_last_hour, p50_latency, p95_latency, tokens_last_hour::bigint
    from memory.job_stats() where kind = 'test_kind_x'$$,
    $$values (2::bigint, 1::bigint, 1::bigint, 2::bigint, interval '5 minutes', 2::bigint, interval '20 seconds',
        interval '29 seconds', 150::bigint)$$,
    'job_stats: 2 queued (oldest 5 min), 1 running, 1 dead, 2 done in the last hour (p50 20 s, p95 29 s), 2 failures and 150 tokens in the last hour'
);

-- enqueue(p_replace) requeues a finished job afresh (created_at now, failed_at cleared), so a
-- month regenerated today does not show in job_stats as a job waiting since it was first made.
select tests.remember('s_regen', memory_private.enqueue('test_kind_y', '{}', 'regen'));
select tests.clear_authentication();
update memory_private.jobs set status = 'done', created_at = now() - interval '2 days', finished_at = now() - interval '2 days'
where id = tests.recall('s_regen')::bigint;
select tests.authenticate_as_service_role();
select memory_private.enqueue('test_kind_y', '{}', 'regen', p_replace => true);
select is(
    (select oldest_queued_age from memory.job_stats() where kind = 'test_kind_y'),
    interval '0',
    'a job queued again just now has waited no time in job_stats'
);

select * from finish();
rollback;
