-- The rate-limit admission of an extraction job (memory_private.extraction_slot, called by
-- memory.job_input) reads only the user's own rows, through indexes: the ledger rows of the last
-- minute through memory_extractions_user_recent_idx (the slot's time without a sort), and the
-- user's running and waiting extraction jobs through jobs_pending_extractions_idx, however many
-- finished jobs the user and everyone else have. claim_jobs' take of one user's next job, the hot
-- path, stays index-driven with that index present: no sequential scan of the queue.
--
-- The queries are those the functions run, prepared with parameters as plpgsql runs them, and
-- explained both as a generic plan (what a cached plan becomes) and as a custom plan.
begin;
select plan(10);

select tests.create_cast('plans-admission');
create temporary table other_user on commit drop as
select tests.create_auth_user('plans-admission-' || i || '@supamem.test') as id from generate_series(1, 40) as i;
insert into memory.users (id, auth_user_id) select o.id, o.id from other_user as o;
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true);
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Long', 'profile',
    (select id from memory.profiles where user_id = tests.recall('owner')::uuid), p_window_turns => 5000
)).id);
-- 2,000 turns: each notes an extraction, queued as a job here; all of them ran long ago but the
-- last 50, which ran in the last minute, and a few that run or wait now.
insert into memory.messages (conversation_id, role, content)
select tests.recall('conv')::uuid, case when i % 2 = 1 then 'user' else 'assistant' end, format('message %s', i)
from generate_series(1, 4000) as i
order by i;
select memory_private.queue_pending_extractions(5000);
update memory_private.jobs set status = 'done', attempts = 1, finished_at = now() - interval '1 hour'
where user_id = tests.recall('owner')::uuid;
insert into memory.memory_extractions (source_message_id, user_id, created_at)
select m.id, tests.recall('owner')::uuid,
    case when m.turn_number > 1950 then now() - interval '30 seconds' else now() - interval '2 hours' end
from memory.messages as m
where m.conversation_id = tests.recall('conv')::uuid and m.role = 'user';
update memory_private.jobs set status = 'running', leased_until = now() + interval '5 minutes', worker = 'w'
where id in (select id from memory_private.jobs where user_id = tests.recall('owner')::uuid and kind = 'extract' order by id limit 5);
update memory_private.jobs set status = 'queued', finished_at = null, run_after = now() + interval '1 minute'
where id in (
    select id from memory_private.jobs
    where user_id = tests.recall('owner')::uuid and kind = 'extract' and status = 'done' order by id limit 20
);
-- Everyone else: a little queued and running work, and much finished work.
insert into memory_private.jobs (kind, payload, user_id, status, attempts, max_attempts, run_after)
select case when i % 3 = 0 then 'title' else 'extract' end, '{}', o.id, 'queued', 0, 5, now() - i * interval '1 second'
from other_user as o cross join generate_series(1, 5) as i;
insert into memory_private.jobs (kind, payload, user_id, status, attempts, max_attempts, leased_until, worker)
select 'extract', '{}', o.id, 'running', 1, 5, now() + interval '5 minutes', 'w' from other_user as o;
insert into memory_private.jobs (kind, payload, user_id, status, attempts, max_attempts, finished_at)
select 'extract', '{}', o.id, 'done', 1, 5, now() - interval '1 hour'
from other_user as o cross join generate_series(1, 500);
analyze memory_private.jobs;
analyze memory.memory_extractions;

select results_eq(
    $$select
        (select count(*)::integer from memory_private.jobs where user_id = tests.recall('owner')::uuid and status = 'done'),
        (select count(*)::integer from memory.memory_extractions
         where user_id = tests.recall('owner')::uuid and created_at > now() - interval '1 minute')$$,
    $$values (1975 + (select count(*)::integer from memory_private.jobs
        where user_id = tests.recall('owner')::uuid and kind <> 'extract'), 50)$$,
    'the owner has thousands of finished jobs and 50 extractions in the last minute'
);

-- extraction_slot's queries.
prepare running_extractions (uuid, bigint) as
select count(*) from memory_private.jobs as j
where j.user_id = $1 and j.kind = 'extract' and j.status = 'running' and j.id <> $2;
prepare waiting_extractions (uuid) as
select count(*) from memory_private.jobs as j
where j.user_id = $1 and j.kind = 'extract' and j.status = 'queued' and j.run_after > now();
prepare recent_extractions (uuid) as
select count(*) from memory.memory_extractions as e
where e.user_id = $1 and e.created_at > now() - interval '1 minute';
prepare slot_frees_at (uuid, integer) as
select e.created_at + interval '1 minute' from memory.memory_extractions as e
where e.user_id = $1 and e.created_at > now() - interval '1 minute'
order by e.created_at
offset $2 - 1 limit 1;
-- claim_jobs' per-user take (one job of one user per round).
prepare claimable (text [], uuid, bigint []) as
select j.id from memory_private.jobs as j
where j.status = 'queued' and j.user_id = $2 and j.run_after <= now()
    and j.kind = any($1) and j.id <> all($3)
order by j.run_after, j.id
limit 1
for update skip locked;

set local plan_cache_mode = force_generic_plan;
select tests.remember('running_plan', tests.plan_of(format('execute running_extractions(%L, 0)', tests.recall('owner')), true));
select tests.remember('waiting_plan', tests.plan_of(format('execute waiting_extractions(%L)', tests.recall('owner')), true));
select tests.remember('recent_plan', tests.plan_of(format('execute recent_extractions(%L)', tests.recall('owner')), true));
select tests.remember('slot_plan', tests.plan_of(format('execute slot_frees_at(%L, 3)', tests.recall('owner')), true));

select ok(
    jsonb_path_exists(tests.recall('running_plan')::jsonb, '$.** ? (@."Index Name" == "jobs_pending_extractions_idx")')
    and not jsonb_path_exists(tests.recall('running_plan')::jsonb, '$.** ? (@."Node Type" == "Seq Scan")'),
    'running extractions of a user: jobs_pending_extractions_idx, no sequential scan'
);
select ok(
    jsonb_path_exists(tests.recall('waiting_plan')::jsonb, '$.** ? (@."Index Name" like_regex "^jobs_(pending_extractions|claimable|queued_by_user|queued_kind_user)_idx$")')
    and not jsonb_path_exists(tests.recall('waiting_plan')::jsonb, '$.** ? (@."Node Type" == "Seq Scan")'),
    'waiting extractions of a user: an index of pending jobs, no sequential scan'
);
select ok(
    jsonb_path_exists(tests.recall('recent_plan')::jsonb, '$.** ? (@."Index Name" == "memory_extractions_user_recent_idx")')
    and not jsonb_path_exists(tests.recall('recent_plan')::jsonb, '$.** ? (@."Node Type" == "Seq Scan")'),
    'the user''s extractions of the last minute: memory_extractions_user_recent_idx, no sequential scan'
);
select ok(
    jsonb_path_exists(tests.recall('slot_plan')::jsonb, '$.** ? (@."Index Name" == "memory_extractions_user_recent_idx")')
    and not jsonb_path_exists(tests.recall('slot_plan')::jsonb, '$.** ? (@."Node Type" == "Sort" || @."Node Type" == "Seq Scan")'),
    'when a slot frees: read in index order, nothing sorted'
);
select cmp_ok(
    (jsonb_path_query_first(tests.recall('running_plan')::jsonb, '$[0].Plan.Plans[0]."Actual Rows"'))::integer, '=', 5,
    'the running count reads the user''s 5 running jobs, none of the finished ones'
);

-- claim_jobs: its per-user take walks an index of queued jobs in every plan.
select ok(
    not jsonb_path_exists(
        tests.plan_of(format('execute claimable(array[''extract''], %L, ''{}'')', tests.recall('owner'))),
        '$.** ? (@."Node Type" == "Seq Scan")'
    ),
    'claim_jobs'' take (generic plan, one kind): no sequential scan'
);
select ok(
    not jsonb_path_exists(
        tests.plan_of(format('execute claimable(array[''extract'', ''title'', ''summarize_conversation''], %L, ''{}'')',
            tests.recall('owner'))),
        '$.** ? (@."Node Type" == "Seq Scan")'
    ),
    'claim_jobs'' take (generic plan, several kinds): no sequential scan'
);
select ok(
    not jsonb_path_exists(
        tests.plan_of(format('execute claimable(array[''extract''], %L, ''{1, 2, 3}'')', tests.recall('owner'))),
        '$.** ? (@."Node Type" == "Seq Scan")'
    ),
    'claim_jobs'' take (generic plan, with jobs already taken this claim): no sequential scan'
);
set local plan_cache_mode = force_custom_plan;
select ok(
    not jsonb_path_exists(
        tests.plan_of(format('execute claimable(array[''extract''], %L, ''{}'')', tests.recall('owner'))),
        '$.** ? (@."Node Type" == "Seq Scan")'
    ),
    'claim_jobs'' take (custom plan): no sequential scan'
);

deallocate running_extractions;
deallocate waiting_extractions;
deallocate recent_extractions;
deallocate slot_frees_at;
deallocate claimable;

select * from finish();
rollback;
