-- claim_jobs deals jobs out fairly: one job per user per round, users served least recently
-- first, then by their oldest due job; oldest first within a user. One user's backlog never
-- makes another user wait behind all of it.
begin;
select plan(6);

select tests.remember('a', memory.user_id_for('jobs-fair.a'));
select tests.remember('b', memory.user_id_for('jobs-fair.b'));
select tests.remember('c', memory.user_id_for('jobs-fair.c'));
-- A has a backlog of six, queued an hour ago; B and C one job each, queued just now.
insert into memory_private.jobs (kind, payload, user_id, max_attempts, run_after, created_at)
select 'test_fair_kind', jsonb_build_object('n', i), tests.recall('a')::uuid, 5,
    now() - interval '1 hour' + i * interval '1 second', now() - interval '1 hour'
from generate_series(1, 6) as i;
insert into memory_private.jobs (kind, payload, user_id, max_attempts) values
('test_fair_kind', '{"n": 1}', tests.recall('b')::uuid, 5),
('test_fair_kind', '{"n": 1}', tests.recall('c')::uuid, 5);

select tests.authenticate_as_service_role();
select results_eq(
    $$select user_id, (payload ->> 'n')::integer from memory.claim_jobs(array['test_fair_kind'], 'w1', 3) order by 1$$,
    $$select * from (values (tests.recall('a')::uuid, 1), (tests.recall('b')::uuid, 1), (tests.recall('c')::uuid, 1)) as v
    order by 1$$,
    'a claim of three takes one job of each user, not three of the oldest backlog'
);
select results_eq(
    $$select user_id, (payload ->> 'n')::integer from memory.claim_jobs(array['test_fair_kind'], 'w1', 3)$$,
    $$values (tests.recall('a')::uuid, 2), (tests.recall('a')::uuid, 3), (tests.recall('a')::uuid, 4)$$,
    'with nobody else waiting, the backlog is served oldest first'
);

-- B queues again; A was served a moment ago, so B goes first though A's jobs are older.
select tests.clear_authentication();
update memory_private.jobs set started_at = now() - interval '10 minutes'
where user_id = tests.recall('b')::uuid and kind = 'test_fair_kind';
insert into memory_private.jobs (kind, payload, user_id, max_attempts) values
('test_fair_kind', '{"n": 2}', tests.recall('b')::uuid, 5);
update memory_private.jobs set started_at = now() where user_id = tests.recall('a')::uuid and status = 'running';
select tests.authenticate_as_service_role();
select results_eq(
    $$select user_id, (payload ->> 'n')::integer from memory.claim_jobs(array['test_fair_kind'], 'w2', 1)$$,
    $$values (tests.recall('b')::uuid, 2)$$,
    'the least recently served user goes first'
);
select results_eq(
    $$select user_id, (payload ->> 'n')::integer from memory.claim_jobs(array['test_fair_kind'], 'w2', 5)$$,
    $$values (tests.recall('a')::uuid, 5), (tests.recall('a')::uuid, 6)$$,
    'then the rest, and a claim stops when the queue is empty'
);
select is_empty(
    $$select * from memory.claim_jobs(array['test_fair_kind'], 'w2', 5)$$, 'nothing is claimed twice'
);
select results_eq(
    $$select count(*)::integer from memory_private.jobs where kind = 'test_fair_kind' and status = 'running' and attempts = 1$$,
    array[9], 'every job was claimed exactly once'
);

select * from finish();
rollback;
