-- memory_private.job_waiters holds, for each user and kind, the earliest run_after of the user's
-- queued jobs of that kind (null once none is queued) and the user's latest started_at: the order
-- claim_jobs serves users in. Every way a job is added, claimed, retried, deferred, released,
-- queued again or deleted keeps it, and a row left behind its jobs is worked out again by the
-- claim that finds nothing due. Only the service reads it; nobody writes it but the kit.
begin;
select plan(26);

select tests.create_cast('jobs-waiters');
update memory_private.settings set value = value || '["test_jw_kind", "test_jw_other"]'::jsonb where key = 'job_kinds';
-- The order as the jobs say it, to compare the rows with.
create temporary view expected_waiters as
select u.user_id, k.kind,
    (select min(j.run_after) from memory_private.jobs as j
     where j.status = 'queued' and j.user_id = u.user_id and j.kind = k.kind) as first_due,
    (select max(j.started_at) from memory_private.jobs as j where j.user_id = u.user_id) as last_served
from (values (tests.recall('owner')::uuid), (tests.recall('stranger')::uuid)) as u (user_id)
cross join (values ('test_jw_kind'), ('test_jw_other')) as k (kind);
create temporary view kept_waiters as
select w.user_id, w.kind, w.first_due, w.last_served from memory_private.job_waiters as w
where w.kind in ('test_jw_kind', 'test_jw_other');

-- Added.
insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after) values
('test_jw_kind', '{"n": 1}', tests.recall('owner')::uuid, 5, now() - interval '2 minutes'),
('test_jw_kind', '{"n": 2}', tests.recall('owner')::uuid, 5, now() - interval '1 minute'),
('test_jw_other', '{"n": 3}', tests.recall('owner')::uuid, 5, now() + interval '1 hour');
select results_eq(
    $$select first_due, last_served from kept_waiters where user_id = tests.recall('owner')::uuid order by kind$$,
    $$values (now() - interval '2 minutes', null::timestamptz), (now() + interval '1 hour', null)$$,
    'queued jobs make their user wait on each kind since the earliest, never served'
);
select is_empty(
    $$select * from kept_waiters where user_id = tests.recall('stranger')::uuid$$,
    'a user without jobs waits on nothing'
);

-- Claimed, then the last one claimed.
select tests.authenticate_as_service_role();
select tests.remember('first', (select id from memory.claim_jobs(array['test_jw_kind'], 'w', 1)));
select tests.clear_authentication();
select results_eq(
    $$select first_due, last_served from kept_waiters where user_id = tests.recall('owner')::uuid order by kind$$,
    $$values (now() - interval '1 minute', now()), (now() + interval '1 hour', now())$$,
    'a claim moves the user''s wait to their next job and marks them served, on every kind'
);
select tests.authenticate_as_service_role();
select tests.remember('second', (select id from memory.claim_jobs(array['test_jw_kind'], 'w', 1)));
select tests.clear_authentication();
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind'$$,
    array[null::timestamptz],
    'claiming the last job of a kind ends the wait on it; the row stays for the next job'
);
select set_eq($$select * from kept_waiters$$, $$select * from expected_waiters where first_due is not null
    or (user_id, kind) in (select user_id, kind from kept_waiters)$$, 'the rows say what the jobs say');

-- Failed with a retry, deferred, released.
select tests.authenticate_as_service_role();
select memory.fail_job(tests.recall('first')::bigint, 'w', 'try later', interval '5 minutes');
select tests.clear_authentication();
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind'$$,
    array[now() + interval '5 minutes'],
    'a failed job queued for a retry makes its user wait again, from the retry'
);
select tests.authenticate_as_service_role();
select memory.defer_job(tests.recall('second')::bigint, 'w', interval '2 minutes');
select tests.clear_authentication();
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind'$$,
    array[now() + interval '2 minutes'],
    'a deferred job counts from when it is due'
);
update memory_private.jobs set run_after = now() - interval '1 second' where id = tests.recall('second')::bigint;
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind'$$,
    array[now() - interval '1 second'],
    'a queued job made due earlier moves the wait with it'
);
select tests.authenticate_as_service_role();
select tests.remember('third', (select id from memory.claim_jobs(array['test_jw_kind'], 'w', 1)));
select memory.release_job(tests.recall('third')::bigint, 'w');
select tests.clear_authentication();
select results_eq(
    $$select last_served from kept_waiters where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind'$$,
    array[now()],
    'a released job leaves the user served by their other jobs only'
);
update memory_private.jobs set started_at = null where user_id = tests.recall('owner')::uuid;
select results_eq(
    $$select last_served from kept_waiters where user_id = tests.recall('owner')::uuid order by kind$$,
    $$values (null::timestamptz), (null)$$,
    'started_at written directly is followed too'
);

-- Finished and queued again; deleted.
update memory_private.jobs set status = 'done', finished_at = now(), run_after = now()
where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind';
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('owner')::uuid and kind = 'test_jw_kind'$$,
    array[null::timestamptz],
    'finished jobs leave nothing to wait on'
);
select memory_private.enqueue('test_jw_kind', '{}', 'jw-again', tests.recall('stranger')::uuid);
update memory_private.jobs set status = 'done', finished_at = now() where dedup_key = 'jw-again';
select memory_private.enqueue('test_jw_kind', '{}', 'jw-again', tests.recall('stranger')::uuid, now() + interval '3 minutes', true);
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('stranger')::uuid and kind = 'test_jw_kind'$$,
    array[now() + interval '3 minutes'],
    'a finished job queued again makes its user wait again'
);
delete from memory_private.jobs where dedup_key = 'jw-again';
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('stranger')::uuid and kind = 'test_jw_kind'$$,
    array[null::timestamptz],
    'a deleted job is no longer waited on'
);
select set_eq($$select * from kept_waiters$$, $$select * from expected_waiters where first_due is not null
    or (user_id, kind) in (select user_id, kind from kept_waiters)$$, 'the rows still say what the jobs say');

-- A row behind its jobs (as a claim that skipped a row another transaction held may leave it):
-- the claim that finds nothing due works it out again.
update memory_private.job_waiters set first_due = now() - interval '1 hour'
where user_id = tests.recall('stranger')::uuid and kind = 'test_jw_kind';
select tests.authenticate_as_service_role();
select is_empty($$select * from memory.claim_jobs(array['test_jw_kind'], 'w', 1)$$, 'nothing is due');
select tests.clear_authentication();
select results_eq(
    $$select first_due from kept_waiters where user_id = tests.recall('stranger')::uuid and kind = 'test_jw_kind'$$,
    array[null::timestamptz],
    'the claim corrected the row it found behind'
);

-- Who reads and writes the rows.
select tests.authenticate_as_anon();
select throws_ok($$select * from memory_private.job_waiters$$, '42501', null, 'anon cannot read the waiting users');
select throws_ok(
    $$select memory_private.refresh_job_waiters(array[gen_random_uuid()])$$,
    '42501', null, 'nor make the kit write them'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select * from memory_private.job_waiters$$, '42501', null, 'their owner cannot read them');
select throws_ok(
    $$select memory_private.refresh_job_waiters(array[gen_random_uuid()])$$,
    '42501', null, 'nor make the kit write them'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select * from memory_private.job_waiters$$, '42501', null, 'a stranger cannot read them');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select * from memory_private.job_waiters$$, '42501', null, 'a tenant admin cannot read them'
);
select throws_ok(
    $$select memory_private.refresh_job_waiters(array[tests.recall('owner')::uuid])$$,
    '42501', null, 'nor make the kit write their tenant''s'
);
select tests.authenticate_as_service_role();
select lives_ok(
    $$select memory_private.refresh_job_waiters(array[tests.recall('owner')::uuid])$$,
    'service_role works rows out (as a claim does)'
);
select tests.authenticate_as_service_role();
select lives_ok($$select count(*) from memory_private.job_waiters$$, 'service_role reads them');
select throws_ok(
    $$insert into memory_private.job_waiters (user_id, kind) values (tests.recall('owner')::uuid, 'test_jw_other')$$,
    '42501', null, 'service_role does not write them: the jobs'' triggers do'
);

select * from finish();
rollback;
