-- An extraction job past its user's rate limit (extraction_rate_limit: 60 per user per minute)
-- waits instead of failing: memory.job_input puts it back in the queue with its attempt given
-- back and a run_after when the user's window has room for it, and answers {"deferred": ...}
-- instead of the prompt's input, so no model is asked. The window holds the user's ledger rows of
-- the last minute and the user's extraction jobs running now; jobs deferred together wait for
-- successive slots. Other users are not held back. Once the window has passed the job is
-- claimable and runs. A job admitted while the window had room has its answer applied at finish
-- even if the window filled meanwhile (a direct caller raced it), while direct callers of
-- apply_extraction still meet 54000. job_stats counts deferred jobs as waiting, not as retries.
--
-- Time is frozen (now() is the transaction's start): the window "passes" by setting the ledger's
-- created_at and the jobs' run_after back a minute, as postgres.
begin;
select plan(31);

update memory_private.settings set value = '60' where key = 'extraction_rate_limit';
update memory_private.settings set value = '5' where key = 'job_max_attempts';
update memory_private.settings set value = '4' where key = 'summary_interval';
update memory_private.settings set value = value || '["test_rl_stats"]'::jsonb where key = 'job_kinds';

-- The busy user (owner) and a calm one (stranger), each with a primary profile.
select tests.create_cast('jobs-rate-limit');
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('owner')::uuid, 'Busy', true), (tests.recall('stranger')::uuid, 'Calm', true);
select tests.remember('conv_b', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Burst', 'profile',
    (select id from memory.profiles where user_id = tests.recall('owner')::uuid), p_window_turns => 1000
)).id);
select count(*) from (
    select memory.add_turn(tests.recall('conv_b')::uuid, 'Question ' || i, 'Answer ' || i) from generate_series(1, 64) as i
) as t;
select tests.remember('conv_c', (memory.create_conversation(
    tests.recall('stranger')::uuid, 'Calm', 'profile',
    (select id from memory.profiles where user_id = tests.recall('stranger')::uuid)
)).id);
select memory.add_turn(tests.recall('conv_c')::uuid, 'I swim in the sea', 'Nice.');
-- The turns' notes become jobs, as a worker's first claim would make them.
select memory_private.queue_pending_extractions();

-- The busy user's first 60 questions were extracted in the last minute, one every half second:
-- the oldest leaves the window in 1.5 s, the next in 2 s, and so on.
create temporary table busy_message on commit drop as
select m.turn_number as turn, m.id from memory.messages as m
where m.conversation_id = tests.recall('conv_b')::uuid and m.role = 'user';
insert into memory.memory_extractions (source_message_id, user_id, created_at)
select b.id, tests.recall('owner')::uuid, now() - interval '59 seconds' + b.turn * interval '0.5 seconds'
from busy_message as b where b.turn <= 60;
delete from memory_private.jobs
where kind = 'extract' and dedup_key in (select 'message:' || b.id from busy_message as b where b.turn <= 60);
create temporary table busy_job on commit drop as
select b.turn, j.id from busy_message as b
join memory_private.jobs as j on j.kind = 'extract' and j.dedup_key = 'message:' || b.id;
grant select on busy_message, busy_job to service_role;

select results_eq(
    $$select array_agg(turn order by turn) from busy_job$$,
    $$values (array[61, 62, 63, 64])$$,
    'the busy user has four extraction jobs queued, past 60 extractions in the last minute'
);

-------------------------------------------------------------------------------------------------
-- Over the limit: job_input defers the job instead of handing out its input.
-------------------------------------------------------------------------------------------------
select tests.authenticate_as_service_role();
select results_eq(
    $$select id, attempts from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('owner')::uuid])$$,
    $$select id, 1 from busy_job where turn = 61$$,
    'the busy user''s first job is claimed (attempt 1)'
);
select tests.remember('answer_61', memory.job_input((select id from busy_job where turn = 61), 'rl-worker'));
select is(
    tests.recall('answer_61')::jsonb,
    jsonb_build_object('kind', 'extract', 'deferred', jsonb_build_object(
        'run_after', now() + interval '1.5 seconds',
        'reason', 'rate limit: 60 extractions per user per minute'
    )),
    'job_input answers deferred, until the oldest extraction leaves the window, and hands out no input'
);
select results_eq(
    $$select status, attempts, worker, leased_until, started_at, run_after, failed_at, last_error
    from memory_private.jobs where id = (select id from busy_job where turn = 61)$$,
    $$values ('queued', 0, null::text, null::timestamptz, null::timestamptz, now() + interval '1.5 seconds', null::timestamptz, null::text)$$,
    'the deferred job is queued again with its attempt given back, no failure recorded, due in 1.5 s'
);
select ok(
    (select run_after > now() from memory_private.jobs where id = (select id from busy_job where turn = 61)),
    'its run_after is in the future'
);
select is_empty(
    $$select id from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('owner')::uuid])
    where id = (select id from busy_job where turn = 61)$$,
    'the deferred job is not claimable before its run_after'
);
-- That claim took job 62 (the next due); it and the two after it are deferred in turn, each
-- waiting for a slot of its own, behind the ones already waiting.
select memory.job_input((select id from busy_job where turn = 62), 'rl-worker');
select results_eq(
    $$select c.id, (memory.job_input(c.id, 'rl-worker') -> 'deferred') is not null
    from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('owner')::uuid]) as c$$,
    $$select id, true from busy_job where turn = 63$$,
    'the third job is claimed and deferred'
);
select results_eq(
    $$select c.id, (memory.job_input(c.id, 'rl-worker') -> 'deferred') is not null
    from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('owner')::uuid]) as c$$,
    $$select id, true from busy_job where turn = 64$$,
    'the fourth job is claimed and deferred'
);
select results_eq(
    $$select b.turn, j.status, j.attempts, j.run_after - now() from busy_job as b join memory_private.jobs as j using (id) order by b.turn$$,
    $$values (61, 'queued', 0, interval '1.5 seconds'), (62, 'queued', 0, interval '2 seconds'),
        (63, 'queued', 0, interval '2.5 seconds'), (64, 'queued', 0, interval '3 seconds')$$,
    'four deferred jobs wait for four successive slots, none with an attempt spent'
);

-------------------------------------------------------------------------------------------------
-- Other users are not held back.
-------------------------------------------------------------------------------------------------
select tests.remember('job_c', (
    select id from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('stranger')::uuid])
));
select is(
    memory.job_input(tests.recall('job_c')::bigint, 'rl-worker') ->> 'user_message',
    'I swim in the sea',
    'another user''s extraction gets its input meanwhile'
);
select results_eq(
    $$select status, attempts from memory_private.jobs where id = tests.recall('job_c')::bigint$$,
    $$values ('running', 1)$$,
    'and stays running under its lease'
);

-------------------------------------------------------------------------------------------------
-- job_stats: a deferred job is waiting work, not a retry.
-------------------------------------------------------------------------------------------------
select ok(
    (select waiting >= 4 and waiting <= queued from memory.job_stats() where kind = 'extract'),
    'job_stats counts the deferred extractions as waiting'
);
select tests.clear_authentication();
select memory_private.enqueue('test_rl_stats', '{}'), memory_private.enqueue('test_rl_stats', '{}');
select tests.authenticate_as_service_role();
select memory.defer_job(
    (select id from memory.claim_jobs(array['test_rl_stats'], 'rl-stats-worker', 1)), 'rl-stats-worker', '30 seconds'
);
select results_eq(
    $$select queued, waiting, retries_last_hour from memory.job_stats() where kind = 'test_rl_stats'$$,
    $$values (2::bigint, 1::bigint, 0::bigint)$$,
    'job_stats: of two queued jobs, the deferred one is waiting, and a deferral is no retry'
);

-------------------------------------------------------------------------------------------------
-- Once the window has passed, the jobs are claimable and run.
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
update memory.memory_extractions set created_at = created_at - interval '1 minute'
where user_id = tests.recall('owner')::uuid;
update memory_private.jobs set run_after = run_after - interval '1 minute'
where id in (select id from busy_job);
select tests.authenticate_as_service_role();
select results_eq(
    $$select array_agg(c.id order by c.id) from memory.claim_jobs(array['extract'], 'rl-worker', 10, null, array[tests.recall('owner')::uuid]) as c$$,
    $$select array_agg(id order by id) from busy_job$$,
    'after the window, all four deferred jobs are claimable'
);
select results_eq(
    $$select b.turn, memory.job_input(b.id, 'rl-worker') ->> 'user_message' from busy_job as b order by b.turn$$,
    $$values (61, 'Question 61'), (62, 'Question 62'), (63, 'Question 63'), (64, 'Question 64')$$,
    'and each gets its input'
);
select results_eq(
    $$select j.status, j.attempts from busy_job as b join memory_private.jobs as j using (id) order by b.turn$$,
    $$values ('running', 1), ('running', 1), ('running', 1), ('running', 1)$$,
    'each runs on its first attempt'
);

-------------------------------------------------------------------------------------------------
-- Running extractions hold slots: 56 in the ledger and 4 running fill the window.
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
update memory.memory_extractions set created_at = created_at + interval '1 minute'
where source_message_id in (select id from busy_message where turn <= 56);
select tests.remember('msg_65', (select user_message_id from memory.add_turn(tests.recall('conv_b')::uuid, 'Question 65', 'Answer 65')));
select memory_private.queue_pending_extractions();
select tests.remember('job_65', (select id from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('msg_65')));
select tests.authenticate_as_service_role();
select results_eq(
    $$select id from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('owner')::uuid])$$,
    $$values (tests.recall('job_65')::bigint)$$,
    'a fifth job is claimed'
);
select is(
    memory.job_input(tests.recall('job_65')::bigint, 'rl-worker') -> 'deferred' ->> 'run_after',
    to_jsonb(now() + interval '1.5 seconds') #>> '{}',
    'with 56 extractions in the window and 4 running, it is deferred until the oldest leaves the window'
);
select results_eq(
    $$select status, attempts from memory_private.jobs where id = tests.recall('job_65')::bigint$$,
    $$values ('queued', 0)$$,
    'it is queued with its attempt given back'
);

-------------------------------------------------------------------------------------------------
-- The race: the window fills while an admitted job's model answers. Its answer is applied.
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
update memory.memory_extractions set created_at = created_at + interval '1 minute'
where source_message_id in (select id from busy_message where turn between 57 and 60);
select tests.authenticate_as_service_role();
select is(
    (select count(*)::integer from memory.memory_extractions
    where user_id = tests.recall('owner')::uuid and created_at > now() - interval '1 minute'),
    60,
    'direct callers filled the busy user''s window (60 extractions in the last minute)'
);
select results_eq(
    $$select e ->> 'outcome' from jsonb_array_elements(memory.finish_extraction(
        (select id from busy_job where turn = 61), 'rl-worker',
        '[{"op": "add", "content": "Plays the oboe on Sundays", "type": "fact"}]'
    )) as e$$,
    $$values ('added')$$,
    'finish_extraction applies the admitted job''s answer'
);
select results_eq(
    $$select j.status, j.attempts, j.last_error from memory_private.jobs as j where j.id = (select id from busy_job where turn = 61)$$,
    $$values ('done', 1, null::text)$$,
    'the job is done on its first attempt'
);
select results_eq(
    $$select m.content from memory.memories as m
    join memory.memory_extractions as e on m.id = any(e.memory_ids)
    where e.source_message_id = (select id from busy_message where turn = 61)$$,
    $$values ('Plays the oboe on Sundays')$$,
    'its memory is stored and recorded in the ledger'
);
select is(
    (select count(*)::integer from memory.memory_extractions
    where user_id = tests.recall('owner')::uuid and created_at > now() - interval '1 minute'),
    61,
    'the window holds 61: the admitted job went past the limit the direct callers had filled'
);
select throws_ok(
    $$select * from memory.apply_extraction(tests.recall('msg_65')::bigint,
        '[{"content": "Reads at night", "type": "pattern"}]', tests.recall('owner')::uuid)$$,
    '54000', 'rate limit: 60 extractions per user per minute',
    'a direct caller still meets the limit (54000)'
);
select is_empty(
    $$select source_message_id from memory.memory_extractions where source_message_id = tests.recall('msg_65')::bigint$$,
    'and its refused extraction left no ledger row'
);

-------------------------------------------------------------------------------------------------
-- Past the ledger rows, slots free at most extraction_rate_limit a minute (a limit of 1 here).
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
update memory_private.settings set value = '1' where key = 'extraction_rate_limit';
select tests.remember('msg_c2', (select user_message_id from memory.add_turn(tests.recall('conv_c')::uuid, 'I run', 'Good.')));
select tests.remember('msg_c3', (select user_message_id from memory.add_turn(tests.recall('conv_c')::uuid, 'I row', 'Good.')));
select tests.authenticate_as_service_role();
select results_eq(
    $$select memory.job_input(c.id, 'rl-worker') -> 'deferred' ->> 'run_after'
    from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('stranger')::uuid]) as c$$,
    $$values (to_jsonb(now() + interval '1 minute') #>> '{}')$$,
    'with the one slot held by a running job and no ledger row to wait for, the next job waits a minute'
);
select results_eq(
    $$select memory.job_input(c.id, 'rl-worker') -> 'deferred' ->> 'run_after'
    from memory.claim_jobs(array['extract'], 'rl-worker', 1, null, array[tests.recall('stranger')::uuid]) as c$$,
    $$values (to_jsonb(now() + interval '2 minutes') #>> '{}')$$,
    'and the one behind it two minutes'
);
select results_eq(
    $$select status, attempts from memory_private.jobs where id = tests.recall('job_c')::bigint$$,
    $$values ('running', 1)$$,
    'the running job keeps its slot and its lease'
);

-------------------------------------------------------------------------------------------------
-- Grants of the functions this adds, and of the ones it replaced.
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
select results_eq(
    $$select f, has_function_privilege('anon', f::regprocedure, 'execute'),
        has_function_privilege('authenticated', f::regprocedure, 'execute'),
        has_function_privilege('service_role', f::regprocedure, 'execute')
    from unnest(array[
        'memory_private.extraction_slot(uuid,bigint)',
        'memory_private.extract_memories(bigint,jsonb,uuid,boolean)',
        'memory.job_input(bigint,text)',
        'memory.finish_extraction(bigint,text,jsonb,jsonb)',
        'memory.apply_extraction(bigint,jsonb,uuid)'
    ]) as f$$,
    $$values
        ('memory_private.extraction_slot(uuid,bigint)', false, false, true),
        ('memory_private.extract_memories(bigint,jsonb,uuid,boolean)', false, false, true),
        ('memory.job_input(bigint,text)', false, false, true),
        ('memory.finish_extraction(bigint,text,jsonb,jsonb)', false, false, true),
        ('memory.apply_extraction(bigint,jsonb,uuid)', false, false, true)$$,
    'only service_role executes the admission, the extraction body, job_input, finish_extraction and apply_extraction'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select * from memory_private.extract_memories(tests.recall('msg_65')::bigint, '[]', tests.recall('owner')::uuid, false)$$,
    '42501', null,
    'a signed-in user cannot apply an extraction without the limit'
);

select * from finish();
rollback;
