-- Memory retention at a frozen instant (p_now): memory_private.archive_stale_memories archives
-- memories older than 2 years that were not referenced for 6 months (seed 004), except pinned
-- ones, deleted ones and those of users who opted in to long-term storage;
-- memory_private.purge_deleted_memories removes memories deleted more than 30 days before p_now
-- (their history stays). Both work in batches of p_batch_size. memory_private.schedule_jobs
-- registers both cron jobs, once each however often it runs.
--
-- p_now is 2000-01-01, so only this file's back-dated rows can qualify, whatever else is in the
-- shared database.
begin;
select plan(21);

select tests.remember('now', '2000-01-01 00:00:00+00'::timestamptz);
select tests.remember('u', memory.user_id_for('memories-archival.u'));
select tests.remember('o', memory.user_id_for('memories-archival.o'));
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('u')::uuid, 'Main', true), (tests.recall('o')::uuid, 'Main', true);
select memory.set_memory_settings(p_long_term_opt_in => true, p_user_id => tests.recall('o')::uuid);

-- Archival candidates, named by what makes them (not) stale.
insert into memory.memories (user_id, content, type, pinned, deleted_at, active, created_at, last_referenced_at)
select tests.recall(v.owner)::uuid, v.content, 'fact', v.pinned, v.deleted_at, v.deleted_at is null, v.created_at, v.last_referenced_at
from (values
    ('u', 'stale: 2y+1d old, referenced 6mo+1d ago', false, null::timestamptz,
        tests.recall('now')::timestamptz - interval '2 years 1 day', tests.recall('now')::timestamptz - interval '6 months 1 day'),
    ('u', 'stale: 2y+1d old, never referenced', false, null,
        tests.recall('now')::timestamptz - interval '2 years 1 day', null),
    ('u', 'young: 2y-1d old', false, null,
        tests.recall('now')::timestamptz - interval '2 years' + interval '1 day', tests.recall('now')::timestamptz - interval '6 months 1 day'),
    ('u', 'recent: referenced 6mo-1d ago', false, null,
        tests.recall('now')::timestamptz - interval '2 years 1 day', tests.recall('now')::timestamptz - interval '6 months' + interval '1 day'),
    ('u', 'pinned', true, null,
        tests.recall('now')::timestamptz - interval '2 years 1 day', tests.recall('now')::timestamptz - interval '6 months 1 day'),
    ('u', 'deleted', false, tests.recall('now')::timestamptz - interval '1 day',
        tests.recall('now')::timestamptz - interval '2 years 1 day', tests.recall('now')::timestamptz - interval '6 months 1 day'),
    ('o', 'opted in', false, null,
        tests.recall('now')::timestamptz - interval '2 years 1 day', tests.recall('now')::timestamptz - interval '6 months 1 day')
) as v (owner, content, pinned, deleted_at, created_at, last_referenced_at);

-- Purge candidates: deleted 40, 31, exactly 30 and 29 days before p_now.
insert into memory.memories (user_id, content, type, active, deleted_at, created_at)
select tests.recall('u')::uuid, 'deleted ' || d || ' days ago', 'fact', false,
    tests.recall('now')::timestamptz - make_interval(days => d), tests.recall('now')::timestamptz - interval '1 year'
from unnest(array[40, 31, 30, 29]) as d;
select tests.remember('purged_ids', (
    select array_agg(id) from memory.memories where user_id = tests.recall('u')::uuid and content in ('deleted 40 days ago', 'deleted 31 days ago')
));

select tests.authenticate_as_service_role();

-- Archival, in batches.
select is(
    memory_private.archive_stale_memories(tests.recall('now')::timestamptz, 1), 1,
    'archive_stale_memories archives at most p_batch_size memories'
);
select results_eq(
    $$select count(*)::integer from memory.memories where user_id in (tests.recall('u')::uuid, tests.recall('o')::uuid) and archived$$,
    array[1],
    'after a batch of 1, one memory is archived'
);
select is(
    memory_private.archive_stale_memories(tests.recall('now')::timestamptz), 1,
    'the next run archives the remaining stale memory'
);
select is(
    memory_private.archive_stale_memories(tests.recall('now')::timestamptz), 0,
    'a further run finds nothing'
);
select results_eq(
    $$select archived from memory.memories where content = 'stale: 2y+1d old, referenced 6mo+1d ago' and user_id = tests.recall('u')::uuid$$,
    $$values (true)$$,
    'a memory 2 years + 1 day old, last referenced 6 months + 1 day ago, is archived'
);
select results_eq(
    $$select archived, deleted_at from memory.memories where content = 'stale: 2y+1d old, never referenced' and user_id = tests.recall('u')::uuid$$,
    $$values (true, null::timestamptz)$$,
    'a memory 2 years + 1 day old and never referenced is archived (not deleted)'
);
select results_eq(
    $$select archived from memory.memories where content = 'young: 2y-1d old' and user_id = tests.recall('u')::uuid$$,
    $$values (false)$$,
    'a memory 2 years - 1 day old is not archived'
);
select results_eq(
    $$select archived from memory.memories where content = 'recent: referenced 6mo-1d ago' and user_id = tests.recall('u')::uuid$$,
    $$values (false)$$,
    'a memory referenced 6 months - 1 day ago is not archived'
);
select results_eq(
    $$select archived from memory.memories where content = 'pinned' and user_id = tests.recall('u')::uuid$$,
    $$values (false)$$,
    'a pinned memory is not archived'
);
select results_eq(
    $$select archived from memory.memories where content = 'deleted' and user_id = tests.recall('u')::uuid$$,
    $$values (false)$$,
    'a deleted memory is not archived (the purge handles it)'
);
select results_eq(
    $$select archived from memory.memories where content = 'opted in' and user_id = tests.recall('o')::uuid$$,
    $$values (false)$$,
    'a memory of a user who opted in to long-term storage is not archived'
);

-- Purge, in batches.
select is(
    memory_private.purge_deleted_memories(tests.recall('now')::timestamptz, 1), 1,
    'purge_deleted_memories deletes at most p_batch_size memories'
);
select is(
    memory_private.purge_deleted_memories(tests.recall('now')::timestamptz), 1,
    'the next run purges the remaining one'
);
select is(
    memory_private.purge_deleted_memories(tests.recall('now')::timestamptz), 0,
    'a further run finds nothing'
);
select is_empty(
    $$select id from memory.memories where id = any(tests.recall('purged_ids')::uuid[])$$,
    'memories deleted 40 and 31 days before p_now are purged'
);
select results_eq(
    $$select content from memory.memories where user_id = tests.recall('u')::uuid and content like 'deleted % days ago' order by content$$,
    $$values ('deleted 29 days ago'), ('deleted 30 days ago')$$,
    'memories deleted 29 days and exactly 30 days before p_now are kept'
);
select results_eq(
    $$select count(distinct memory_id)::integer from memory.memory_events where memory_id = any(tests.recall('purged_ids')::uuid[])$$,
    array[2],
    'the purged memories'' history stays'
);
select results_eq(
    $$select deleted_at is not null from memory.memories where content = 'deleted' and user_id = tests.recall('u')::uuid$$,
    $$values (true)$$,
    'a memory deleted 1 day before p_now is still there to restore'
);

-- Cron: registering again keeps one job per name.
select tests.clear_authentication();
select lives_ok($$select memory_private.schedule_jobs()$$, 'schedule_jobs runs again');
select results_eq(
    $$select format('%s | %s | %s | %s', jobname, schedule, command, count(*) over (partition by jobname)) collate "default" from cron.job
    where jobname in ('supamem-archive-memories', 'supamem-purge-memories') order by jobname$$,
    $$values ('supamem-archive-memories | 23 2 * * * | select memory_private.archive_stale_memories() | 1'),
        ('supamem-purge-memories | 41 2 * * * | select memory_private.purge_deleted_memories() | 1')$$,
    'the archive and purge jobs are registered exactly once each, with their schedule and command'
);
select is_empty(
    $$select jobname from cron.job where jobname like 'supamem-%' group by jobname having count(*) > 1$$,
    'no supamem job is registered twice'
);

select * from finish();
rollback;
