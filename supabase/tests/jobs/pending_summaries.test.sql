-- Every summary_interval turns a turn notes its conversation's summary
-- (memory_private.pending_summaries) instead of queueing a job; memory_private.queue_pending_summaries
-- turns the notes into the jobs a turn used to queue (same key, payload and user), and so does a
-- claim that asks for summaries. A note counts as a queued job in job_stats; a kind left out of
-- job_kinds is noted by no turn, and notes already there wait. Nobody but the service reads the
-- notes, and only the kit's functions write them.
begin;
select plan(19);

select tests.create_cast('jobs-summary-notes');
update memory_private.settings set value = '2' where key = 'summary_interval';
update memory_private.settings set value = '["summarize_conversation"]' where key = 'job_kinds';
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Notes', p_window_turns => 1000)).id);
select tests.remember('gone', (memory.create_conversation(tests.recall('owner')::uuid, 'Gone', p_window_turns => 1000)).id);
select memory.add_turn(tests.recall(c)::uuid, format('Question %s', i), 'Answer') from unnest(array['conv', 'gone']) as c, generate_series(1, 2) as i;

select results_eq(
    $$select conversation_id, to_turn, turns from memory_private.pending_summaries
    where conversation_id in (tests.recall('conv')::uuid, tests.recall('gone')::uuid) order by 1$$,
    $$values (tests.recall('conv')::uuid, 2, 2), (tests.recall('gone')::uuid, 2, 2) order by 1$$,
    'turn 2 of each conversation (summary_interval 2) notes the summary of turns 1 and 2'
);
select is_empty(
    $$select id from memory_private.jobs where kind = 'summarize_conversation' and user_id = tests.recall('owner')::uuid$$,
    'notes are not jobs'
);
select results_eq(
    $$select queued >= 2 from memory.job_stats() where kind = 'summarize_conversation'$$,
    array[true],
    'job_stats counts the notes as queued summarize_conversation jobs'
);

-- A pause of the kind: no note from a turn, and the pass leaves the notes there.
update memory_private.settings set value = '[]' where key = 'job_kinds';
select memory.add_turn(tests.recall('conv')::uuid, format('Question %s', i), 'Answer') from generate_series(3, 4) as i;
select is_empty(
    $$select 1 from memory_private.pending_summaries where conversation_id = tests.recall('conv')::uuid and to_turn = 4$$,
    'with summarize_conversation left out of job_kinds a turn notes nothing'
);
select is(memory_private.queue_pending_summaries(), 0, 'and the pass takes no note');
update memory_private.settings set value = '["summarize_conversation"]' where key = 'job_kinds';

-- The pass: one job per note, as a turn queued it; a conversation deleted meanwhile leaves no job.
delete from memory.conversations where id = tests.recall('gone')::uuid;
select tests.remember('noted_at', (
    select noted_at from memory_private.pending_summaries where conversation_id = tests.recall('conv')::uuid
));
select cmp_ok(memory_private.queue_pending_summaries(null), '>=', 2, 'the pass takes the notes');
select results_eq(
    $$select dedup_key, user_id, payload, status from memory_private.jobs
    where kind = 'summarize_conversation' and user_id = tests.recall('owner')::uuid$$,
    $$values ('conversation:' || tests.recall('conv') || ':2', tests.recall('owner')::uuid,
        jsonb_build_object('conversation_id', tests.recall('conv')::uuid, 'from_turn', 1, 'to_turn', 2), 'queued')$$,
    'each note of a conversation still there became its job, keyed and shaped as a turn queued it'
);
select results_eq(
    $$select run_after = tests.recall('noted_at')::timestamptz and created_at = tests.recall('noted_at')::timestamptz
    from memory_private.jobs where kind = 'summarize_conversation' and user_id = tests.recall('owner')::uuid$$,
    array[true],
    'the job is due and created when the turn noted it, so the queue''s ages count the wait'
);
select is_empty(
    $$select 1 from memory_private.pending_summaries
    where conversation_id in (tests.recall('conv')::uuid, tests.recall('gone')::uuid)$$,
    'both notes are gone'
);
-- A note of a summary already queued (a turn noted again) adds nothing.
insert into memory_private.pending_summaries (conversation_id, to_turn, turns) values (tests.recall('conv')::uuid, 2, 2);
select memory_private.queue_pending_summaries(null, array[tests.recall('owner')::uuid]);
select is(
    (select count(*)::integer from memory_private.jobs where kind = 'summarize_conversation' and user_id = tests.recall('owner')::uuid),
    1, 'a note of a queued summary adds no job'
);

-- A claim for summaries queues its users' notes first, and no one else's.
select memory.add_turn(tests.recall('conv')::uuid, format('Question %s', i), 'Answer') from generate_series(5, 6) as i;
select tests.authenticate_as_service_role();
select is_empty(
    $$select 1 from memory.claim_jobs(array['summarize_conversation'], 'notes-worker', 10,
        p_user_ids => array[tests.recall('stranger')::uuid])$$,
    'a claim for another user''s summaries leaves this user''s note'
);

select ok(
    exists (
        select 1 from memory.claim_jobs(array['summarize_conversation'], 'notes-worker', 10, p_user_ids => array[tests.recall('owner')::uuid])
        where payload ->> 'to_turn' = '6'
    ),
    'a claim for summaries takes the summary noted by turn 6'
);

-- Who may read and write the notes.
select tests.authenticate_as_anon();
select throws_ok($$select * from memory_private.pending_summaries$$, '42501', null, 'anon cannot read the notes');
select throws_ok($$select memory_private.queue_pending_summaries()$$, '42501', null, 'anon cannot queue the notes');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select * from memory_private.pending_summaries$$, '42501', null, 'the owner cannot read the notes');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select * from memory_private.pending_summaries$$, '42501', null, 'a stranger cannot read the notes');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select * from memory_private.pending_summaries$$, '42501', null, 'a tenant admin cannot read the notes');
select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory_private.pending_summaries (conversation_id, to_turn, turns) values (gen_random_uuid(), 1, 1)$$,
    '42501', null, 'service_role cannot write a note: only turns do'
);
select lives_ok($$select memory_private.queue_pending_summaries()$$, 'service_role queues the notes');

select * from finish();
rollback;
