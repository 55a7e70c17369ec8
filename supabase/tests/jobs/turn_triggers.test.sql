-- The jobs a turn queues (memory_private.assign_turn, for each assistant message): its user
-- message is noted for extraction when the memory gate is open for its author (primary profile
-- selected, remember on, author = the user, memory not paused), and the note becomes an 'extract'
-- job when a worker claims or memory_private.queue_pending_extractions runs;
-- 'summarize_conversation' every summary_interval (4) turns, noted (memory_private.pending_summaries)
-- and queued when a worker claims summaries or memory_private.queue_pending_summaries runs; 'title'
-- after turn 1 of an untitled
-- conversation. memory.request_extraction(conversation) queues what is not queued, noted or
-- extracted yet.
--
-- Jobs are found by this file's conversation ids and users, never by kind alone: the shared
-- queue holds other tests' jobs.
begin;
select plan(33);

update memory_private.settings set value = '4' where key = 'summary_interval';
update memory_private.settings set value = '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year"]' where key = 'job_kinds';
select tests.create_cast('jobs-turns');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Theirs', true) returning id
)
select tests.remember('stranger_profile', id) from p;
select tests.remember('gated', (memory.create_conversation(
    tests.recall('owner')::uuid, null, 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('generic', (memory.create_conversation(tests.recall('owner')::uuid, null, 'chat', p_window_turns => 1000)).id);
select tests.remember('titled', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Named by the user', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('off', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Off', 'profile', tests.recall('profile')::uuid, p_remember => false, p_window_turns => 1000)).id);
select tests.remember('together', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Together', 'together', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
insert into memory.participants (conversation_id, user_id, profile_id)
values (tests.recall('together')::uuid, tests.recall('stranger')::uuid, tests.recall('stranger_profile')::uuid);

-- The owner's app writes the turns, signed in as the owner.
select tests.authenticate_as(tests.recall('owner')::uuid);

-- Turn 1 of a gated conversation: the question alone queues nothing; the answer queues the
-- extraction of the question and, as the conversation has no title, a title.
select tests.remember('q1', (memory.add_message(tests.recall('gated')::uuid, 'user', 'I go hiking with my dog Rex')).id);
select tests.clear_authentication();
select is_empty(
    $$select id from memory_private.jobs where payload ->> 'conversation_id' = tests.recall('gated')$$,
    'a user message alone queues no job'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_message(tests.recall('gated')::uuid, 'assistant', 'Rex sounds like a great companion.');
select tests.clear_authentication();
select results_eq(
    $$select message_id from memory_private.pending_extractions where message_id = tests.recall('q1')::bigint$$,
    $$values (tests.recall('q1')::bigint)$$,
    'the answer notes its question for extraction'
);
select is_empty(
    $$select id from memory_private.jobs where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('gated')$$,
    'a note is not a job yet'
);
select cmp_ok(memory_private.queue_pending_extractions(), '>=', 1, 'queueing the notes queues the question''s job');
select is_empty(
    $$select message_id from memory_private.pending_extractions where message_id = tests.recall('q1')::bigint$$,
    'the note is gone once its job is queued'
);
select results_eq(
    $$select kind, dedup_key, user_id, payload, status from memory_private.jobs
    where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('gated')$$,
    $$values ('extract', 'message:' || tests.recall('q1'), tests.recall('owner')::uuid,
        jsonb_build_object('source_message_id', tests.recall('q1')::bigint, 'conversation_id', tests.recall('gated')::uuid),
        'queued')$$,
    'the answer queues one extract job keyed by the user message, for its author'
);
select results_eq(
    $$select kind, dedup_key, user_id, payload from memory_private.jobs
    where kind = 'title' and payload ->> 'conversation_id' = tests.recall('gated')$$,
    $$values ('title', 'title:' || tests.recall('gated'), tests.recall('owner')::uuid,
        jsonb_build_object('conversation_id', tests.recall('gated')::uuid))$$,
    'turn 1 of an untitled conversation queues a title job'
);
select is_empty(
    $$select id from memory_private.jobs where kind = 'summarize_conversation' and payload ->> 'conversation_id' = tests.recall('gated')
    union all select to_turn from memory_private.pending_summaries where conversation_id = tests.recall('gated')::uuid$$,
    'turn 1 queues no conversation summary'
);

-- Turns 2 to 4: an extraction each, a summary of turns 1-4 at turn 4, no second title.
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('gated')::uuid, 'We walk by the river', 'Lovely.');
select memory.add_turn(tests.recall('gated')::uuid, 'Rex loves the water', 'Dogs often do.');
select tests.clear_authentication();
select is_empty(
    $$select id from memory_private.jobs where kind = 'summarize_conversation' and payload ->> 'conversation_id' = tests.recall('gated')
    union all select to_turn from memory_private.pending_summaries where conversation_id = tests.recall('gated')::uuid$$,
    'turns 2 and 3 queue no conversation summary'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('gated')::uuid, 'Tomorrow we climb a hill', 'Have fun.');
select tests.clear_authentication();
select results_eq(
    $$select to_turn, turns from memory_private.pending_summaries where conversation_id = tests.recall('gated')::uuid$$,
    $$values (4, 4)$$,
    'turn 4 (summary_interval) notes the summary of its four turns, queueing no job itself'
);
select memory_private.queue_pending_extractions();
select memory_private.queue_pending_summaries();
select is_empty(
    $$select 1 from memory_private.pending_summaries where conversation_id = tests.recall('gated')::uuid$$,
    'the pass takes the note'
);
select results_eq(
    $$select dedup_key, user_id, payload ->> 'from_turn', payload ->> 'to_turn' from memory_private.jobs
    where kind = 'summarize_conversation' and payload ->> 'conversation_id' = tests.recall('gated')$$,
    $$values ('conversation:' || tests.recall('gated') || ':4', tests.recall('owner')::uuid, '1', '4')$$,
    'turn 4 (summary_interval) queues one summary of turns 1 to 4'
);
select results_eq(
    $$select j.dedup_key from memory_private.jobs as j
    where j.kind = 'extract' and j.payload ->> 'conversation_id' = tests.recall('gated') order by j.id$$,
    $$select 'message:' || m.id from memory.messages as m
    where m.conversation_id = tests.recall('gated')::uuid and m.role = 'user' order by m.turn_number$$,
    'each of the four turns queued one extract job, keyed by its user message'
);
select results_eq(
    $$select count(*)::integer from memory_private.jobs where kind = 'title' and payload ->> 'conversation_id' = tests.recall('gated')$$,
    array[1],
    'later turns queue no further title job'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('gated')::uuid, format('Turn %s', i), 'Ok.') from generate_series(5, 8) as i;
select tests.clear_authentication();
select memory_private.queue_pending_summaries();
select results_eq(
    $$select payload ->> 'from_turn', payload ->> 'to_turn' from memory_private.jobs
    where kind = 'summarize_conversation' and payload ->> 'conversation_id' = tests.recall('gated') order by id$$,
    $$values ('1', '4'), ('5', '8')$$,
    'turn 8 queues the summary of turns 5 to 8'
);

-- A generic chat (no profile) queues no extraction, still a title; a titled conversation no title.
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('generic')::uuid, 'I go hiking with my dog Rex', 'Nice.');
select memory.add_turn(tests.recall('titled')::uuid, 'I go hiking with my dog Rex', 'Nice.');
select tests.clear_authentication();
select memory_private.queue_pending_extractions();
select is_empty(
    $$select id from memory_private.jobs where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('generic')$$,
    'a generic chat queues no extract job'
);
select results_eq(
    $$select count(*)::integer from memory_private.jobs where kind = 'title' and payload ->> 'conversation_id' = tests.recall('generic')$$,
    array[1],
    'a generic chat still gets its title job'
);
select is_empty(
    $$select id from memory_private.jobs where kind = 'title' and payload ->> 'conversation_id' = tests.recall('titled')$$,
    'a conversation that has a title queues no title job'
);
select results_eq(
    $$select count(*)::integer from memory_private.jobs where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('titled')$$,
    array[1],
    'the titled (gated) conversation still queues its extraction'
);

-- Paused memory closes the gate.
update memory.users set memory_paused = true where id = tests.recall('owner')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('paused_q', (select user_message_id from memory.add_turn(tests.recall('titled')::uuid, 'A secret', 'Noted.')));
select tests.clear_authentication();
update memory.users set memory_paused = false where id = tests.recall('owner')::uuid;
select memory_private.queue_pending_extractions();
select is_empty(
    $$select id from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('paused_q')$$,
    'while memory is paused a turn queues no extract job'
);

-- Remember off: no extraction; after toggling it on, request_extraction queues exactly the
-- messages not queued yet.
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('off')::uuid, 'I play the cello', 'Beautiful.');
select memory.add_turn(tests.recall('off')::uuid, 'I practise every morning', 'Good habit.');
select tests.clear_authentication();
select memory_private.queue_pending_extractions();
select is_empty(
    $$select id from memory_private.jobs where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('off')$$,
    'with remember off a turn queues no extract job'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.request_extraction(tests.recall('off')::uuid), 0, 'request_extraction queues nothing while remember is off');
update memory.conversations set remember = true where id = tests.recall('off')::uuid;
select is(memory.request_extraction(tests.recall('off')::uuid), 2, 'after turning remember on, request_extraction queues both turns');
select is(memory.request_extraction(tests.recall('off')::uuid), 0, 'asking again queues nothing: both are queued');
select memory.add_turn(tests.recall('off')::uuid, 'And sometimes at night', 'Mind the neighbours.');
select is(memory.request_extraction(tests.recall('off')::uuid), 0, 'a turn already noted for extraction is not queued again');
select tests.clear_authentication();
select memory_private.queue_pending_extractions();
select results_eq(
    $$select j.dedup_key from memory_private.jobs as j
    where j.kind = 'extract' and j.payload ->> 'conversation_id' = tests.recall('off') order by j.dedup_key$$,
    $$select 'message:' || m.id from memory.messages as m
    where m.conversation_id = tests.recall('off')::uuid and m.role = 'user' order by 'message:' || m.id$$,
    'one extract job per user message of the conversation, none twice'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.request_extraction(tests.recall('gated')::uuid), 0, 'request_extraction on a conversation whose turns are all queued queues nothing');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.request_extraction(tests.recall('generic')::uuid), 0, 'a stranger''s request on the owner''s conversation queues nothing');

-- An extraction that ran while the gate was closed (remember turned off after the turn was
-- queued) is done without a ledger row; once the gate opens again, request_extraction queues it
-- again: the done job's dedup key does not block it.
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('late', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Late', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('late_q', (select user_message_id from memory.add_turn(tests.recall('late')::uuid, 'I am learning Welsh', 'Da iawn!')));
select tests.clear_authentication();
select memory_private.queue_pending_extractions();
select tests.authenticate_as(tests.recall('owner')::uuid);
update memory.conversations set remember = false where id = tests.recall('late')::uuid;
-- The owner has older extract jobs waiting; this one goes first.
select tests.clear_authentication();
update memory_private.jobs set run_after = '-infinity' where kind = 'extract' and dedup_key = 'message:' || tests.recall('late_q');
select tests.authenticate_as_service_role();
select tests.remember('late_job', (select id from memory.claim_jobs(
    array['extract'], 'turns-worker', 1, p_user_ids => array[tests.recall('owner')::uuid])));
select results_eq(
    $$select r ->> 'outcome' from jsonb_array_elements(memory.finish_extraction(
        tests.recall('late_job')::bigint, 'turns-worker', '[{"content": "Learns Welsh", "type": "fact"}]')) as r$$,
    array['skipped: remember is off in this conversation'],
    'the extraction runs while remember is off: skipped'
);
select results_eq(
    $$select j.status, exists (select 1 from memory.memory_extractions as e where e.source_message_id = tests.recall('late_q')::bigint)
    from memory_private.jobs as j where j.id = tests.recall('late_job')::bigint$$,
    $$values ('done', false)$$,
    'the job is done and the message is not marked as extracted'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
update memory.conversations set remember = true where id = tests.recall('late')::uuid;
select is(
    memory.request_extraction(tests.recall('late')::uuid), 1,
    'with remember on again, request_extraction queues the message that was never extracted'
);

-- Together mode: a participant's message feeds the participant's memory (their own primary
-- profile is selected), whoever writes it.
select tests.authenticate_as_service_role();
select tests.remember('together_q1', (select user_message_id from memory.add_turn(
    tests.recall('together')::uuid, 'I am the participant and I paint', 'Lovely.', p_author_id => tests.recall('stranger')::uuid)));
select memory_private.queue_pending_extractions();
select results_eq(
    $$select user_id from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('together_q1')$$,
    $$values (tests.recall('stranger')::uuid)$$,
    'written by the service, a participant''s turn queues an extraction for the participant'
);
-- Posted from the participant's own signed-in session (the author is the caller), a turn in
-- the owner's conversation is queued for the participant: the trigger asks the gate about the
-- author, not the owner.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select tests.remember('together_q2', (select user_message_id from memory.add_turn(
    tests.recall('together')::uuid, 'I am the participant and I sing', 'Lovely.')));
select tests.clear_authentication();
select memory_private.queue_pending_extractions();
select results_eq(
    $$select user_id from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('together_q2')$$,
    $$values (tests.recall('stranger')::uuid)$$,
    'posted by the signed-in participant, their turn queues an extraction for the participant'
);

select * from finish();
rollback;
