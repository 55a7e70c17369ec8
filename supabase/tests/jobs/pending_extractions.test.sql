-- A finished turn notes its question (memory_private.pending_extractions) instead of queueing an
-- extract job; memory_private.queue_pending_extractions turns the notes into jobs through
-- queue_extraction, and so does a claim that asks for extractions. What the turn notes is what
-- the jobs used to be: the question of a finished turn whose gate is open for its author. A note
-- counts as a queued extract job in job_stats. Nobody but the service reads the notes, and only
-- the kit's functions write them.
begin;
select plan(32);

select tests.create_cast('jobs-notes');
update memory_private.settings set value = '1000' where key = 'summary_interval';
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;
select tests.remember('gated', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Gated', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('short', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Short', 'profile', tests.recall('profile')::uuid, p_window_turns => 2)).id);
select tests.remember('generic', (memory.create_conversation(tests.recall('owner')::uuid, 'Chat', 'chat')).id);

-- What a turn notes.
select tests.remember('q1', (select user_message_id from memory.add_turn(tests.recall('gated')::uuid, 'I keep bees', 'Sweet.')));
select results_eq(
    $$select message_id from memory_private.pending_extractions
    where message_id in (select id from memory.messages where conversation_id = tests.recall('gated')::uuid)$$,
    $$values (tests.recall('q1')::bigint)$$,
    'a finished turn in a gated conversation notes its question, and only that'
);
select tests.remember('q2', (memory.add_message(tests.recall('gated')::uuid, 'user', 'And I sell the honey')).id);
select is_empty(
    $$select message_id from memory_private.pending_extractions where message_id = tests.recall('q2')::bigint$$,
    'a question without its answer notes nothing'
);
select memory.add_message(tests.recall('gated')::uuid, 'assistant', 'Good business.');
select results_eq(
    $$select count(*)::integer from memory_private.pending_extractions where message_id = tests.recall('q2')::bigint$$,
    array[1],
    'its answer notes it'
);
select memory.add_message(tests.recall('gated')::uuid, 'assistant', 'Anything else?');
select results_eq(
    $$select count(*)::integer from memory_private.pending_extractions
    where message_id in (select id from memory.messages where conversation_id = tests.recall('gated')::uuid)$$,
    array[2],
    'an answer that opens a turn of its own notes nothing'
);
select memory.add_turn(tests.recall('generic')::uuid, 'I keep bees', 'Sweet.');
select is_empty(
    $$select message_id from memory_private.pending_extractions
    where message_id in (select id from memory.messages where conversation_id = tests.recall('generic')::uuid)$$,
    'a closed gate (no profile) notes nothing'
);
select is_empty(
    $$select id from memory_private.jobs where kind = 'extract' and user_id = tests.recall('owner')::uuid$$,
    'notes are not jobs'
);
select results_eq(
    $$select queued >= 2 from memory.job_stats() where kind = 'extract'$$,
    array[true],
    'job_stats counts the notes as queued extract jobs'
);

-- Notes become jobs once, for the question's author; a second pass queues nothing.
update memory_private.pending_extractions set noted_at = now() - interval '5 minutes'
where message_id in (tests.recall('q1')::bigint, tests.recall('q2')::bigint);
select cmp_ok(memory_private.queue_pending_extractions(), '>=', 2, 'the notes are queued');
select results_eq(
    $$select bool_and(run_after = now() - interval '5 minutes' and created_at = now() - interval '5 minutes')
    from memory_private.jobs where kind = 'extract' and user_id = tests.recall('owner')::uuid$$,
    array[true],
    'each job is due and created when its turn noted it'
);
select results_eq(
    $$select dedup_key, payload, status from memory_private.jobs
    where kind = 'extract' and user_id = tests.recall('owner')::uuid order by id$$,
    $$values
        ('message:' || tests.recall('q1'), jsonb_build_object(
            'source_message_id', tests.recall('q1')::bigint, 'conversation_id', tests.recall('gated')::uuid), 'queued'),
        ('message:' || tests.recall('q2'), jsonb_build_object(
            'source_message_id', tests.recall('q2')::bigint, 'conversation_id', tests.recall('gated')::uuid), 'queued')$$,
    'each note became one extract job keyed by its question'
);
select is_empty(
    $$select message_id from memory_private.pending_extractions where message_id in (tests.recall('q1')::bigint, tests.recall('q2')::bigint)$$,
    'the queued notes are gone'
);
select is(
    (select count(*)::integer from memory_private.jobs where kind = 'extract' and user_id = tests.recall('owner')::uuid),
    2,
    'a second pass queues nothing more'
);
select is(memory_private.queue_pending_extractions(0), 0, 'a pass of no notes queues nothing');

-- A note whose question is gone, or was extracted meanwhile, leaves without a job.
select tests.remember('q3', (select user_message_id from memory.add_turn(tests.recall('short')::uuid, 'My hives are blue', 'Nice.')));
select tests.remember('q4', (select user_message_id from memory.add_turn(tests.recall('short')::uuid, 'I have three hives', 'Busy.')));
select tests.remember('q5', (select user_message_id from memory.add_turn(tests.recall('short')::uuid, 'I want five', 'Ambitious.')));
select is_empty(
    $$select id from memory.messages where id = tests.recall('q3')::bigint$$,
    'the window (two turns) trimmed the first of these questions'
);
insert into memory.memory_extractions (source_message_id, user_id) values (tests.recall('q4')::bigint, tests.recall('owner')::uuid);
select memory_private.queue_pending_extractions();
select results_eq(
    $$select dedup_key from memory_private.jobs where kind = 'extract' and dedup_key in (
        'message:' || tests.recall('q3'), 'message:' || tests.recall('q4'), 'message:' || tests.recall('q5'))$$,
    $$values ('message:' || tests.recall('q5'))$$,
    'a trimmed question and an extracted one queue nothing; the third is queued'
);
select is_empty(
    $$select message_id from memory_private.pending_extractions
    where message_id in (tests.recall('q3')::bigint, tests.recall('q4')::bigint, tests.recall('q5')::bigint)$$,
    'all three notes are gone'
);

-- A regenerated answer: the first is deleted, a second joins the turn; the question stays noted once.
select tests.remember('a2', (select assistant_message_id from memory.add_turn(tests.recall('short')::uuid, 'I rent hives', 'Fine.')));
delete from memory.messages where id = tests.recall('a2')::bigint;
select lives_ok(
    $$select memory.add_message(tests.recall('short')::uuid, 'assistant', 'Renting is cheaper.')$$,
    'a second answer to a noted question is stored'
);
select memory_private.queue_pending_extractions();

-- The turn's answer stands: a pause after the turn is for the extraction to honour when applied.
select tests.remember('q7', (select user_message_id from memory.add_turn(tests.recall('gated')::uuid, 'I wear a veil', 'Wise.')));
update memory.users set memory_paused = true where id = tests.recall('owner')::uuid;
select memory_private.queue_pending_extractions();
update memory.users set memory_paused = false where id = tests.recall('owner')::uuid;
select results_eq(
    $$select status from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('q7')$$,
    array['queued'],
    'a note taken while memory is paused still becomes its job: the gate was open at the turn'
);

-- A question queued on request before its answer came keeps that job; one whose job finished
-- without extracting it (the gate was closed when it ran) is queued again.
select tests.remember('q8', (memory.add_message(tests.recall('gated')::uuid, 'user', 'My queen is old')).id);
select tests.remember('q9', (memory.add_message(tests.recall('short')::uuid, 'user', 'My smoker broke')).id);
select memory.request_extraction(tests.recall('gated')::uuid), memory.request_extraction(tests.recall('short')::uuid);
update memory_private.jobs set status = 'done', finished_at = now()
where kind = 'extract' and dedup_key = 'message:' || tests.recall('q9');
select memory.add_message(tests.recall('gated')::uuid, 'assistant', 'Replace her soon.');
select memory.add_message(tests.recall('short')::uuid, 'assistant', 'Buy another.');
select memory_private.queue_pending_extractions();
select results_eq(
    $$select count(*)::integer, min(status) from memory_private.jobs
    where kind = 'extract' and dedup_key = 'message:' || tests.recall('q8')$$,
    $$values (1, 'queued')$$,
    'a question already queued on request keeps its one job'
);
select results_eq(
    $$select count(*)::integer, min(status) from memory_private.jobs
    where kind = 'extract' and dedup_key = 'message:' || tests.recall('q9')$$,
    $$values (1, 'queued')$$,
    'a question whose job finished without extracting it is queued again'
);

-- A claim for extractions queues the notes first and can take the new job at once; a claim for
-- other kinds leaves them.
update memory_private.jobs set status = 'done', finished_at = now() where user_id = tests.recall('owner')::uuid;
select tests.remember('q6', (select user_message_id from memory.add_turn(tests.recall('gated')::uuid, 'Bees sleep at night', 'True.')));
select tests.authenticate_as_service_role();
select is_empty(
    $$select id from memory.claim_jobs(array['title'], 'notes-worker', p_user_ids => array[tests.recall('owner')::uuid])$$,
    'a claim for titles claims no extraction'
);
select results_eq(
    $$select count(*)::integer from memory_private.pending_extractions where message_id = tests.recall('q6')::bigint$$,
    array[1],
    'and leaves the note'
);
select results_eq(
    $$select kind, payload ->> 'source_message_id' from memory.claim_jobs(
        array['extract'], 'notes-worker', p_user_ids => array[tests.recall('owner')::uuid])$$,
    $$values ('extract', tests.recall('q6'))$$,
    'a claim for extractions queues the note and claims its job'
);

-- Who may read and write the notes.
select tests.authenticate_as_anon();
select throws_ok($$select * from memory_private.pending_extractions$$, '42501', null, 'anon cannot read the notes');
select throws_ok($$select memory_private.queue_pending_extractions()$$, '42501', null, 'anon cannot queue the notes');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select * from memory_private.pending_extractions$$, '42501', null, 'the owner cannot read the notes');
select throws_ok(
    $$insert into memory_private.pending_extractions (message_id) values (tests.recall('q1')::bigint)$$, '42501', null,
    'the owner cannot add a note'
);
select throws_ok($$select memory_private.queue_pending_extractions()$$, '42501', null, 'the owner cannot queue the notes');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select * from memory_private.pending_extractions$$, '42501', null, 'a stranger cannot read the notes');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select * from memory_private.pending_extractions$$, '42501', null, 'a tenant admin cannot read the notes');
select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory_private.pending_extractions (message_id) values (tests.recall('q1')::bigint)$$, '42501', null,
    'service_role cannot write a note: only turns do'
);
select lives_ok($$select memory_private.queue_pending_extractions()$$, 'service_role queues the notes');

select * from finish();
rollback;
