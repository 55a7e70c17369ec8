-- memory.memory_metrics (seed 004's observability and success metrics): per user and day, answers,
-- answers that used memories, answers whose memories were held out (the chat's A/B arm), memories
-- added, references, turns extracted. Anon is refused; a user reads their own figures; a tenant's
-- admin reads a user of that tenant; a stranger, another tenant's admin or a participant reads
-- nothing of another user; the service role reads any user, or every user.
begin;
select plan(9);

select tests.create_cast('memories-metrics');
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true);
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Metrics', 'profile',
    (select id from memory.profiles where user_id = tests.recall('owner')::uuid))).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs')).id);
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid);

select tests.authenticate_as_service_role();
-- Two memories added, one met again as a duplicate (a reference).
select tests.remember('m1', (select memory_id from memory.remember('Runs every morning', 'pattern', tests.recall('owner')::uuid)));
select memory.remember('Reads poetry at night', 'pattern', tests.recall('owner')::uuid);
select memory.remember('Runs every morning', 'pattern', tests.recall('owner')::uuid);
-- Three answers: one used a memory (a second reference), one held its memories out, one plain.
select memory.add_turn(tests.recall('conv')::uuid, 'How do I keep it up?', 'Keep running.',
    p_used_memory_ids => array[tests.recall('m1')::uuid]);
select memory.add_turn(tests.recall('conv')::uuid, 'And tomorrow?', 'Rest.', p_metadata => '{"memory_arm": "holdout"}');
select memory.add_turn(tests.recall('conv')::uuid, 'Thanks', 'Welcome.');
select memory.add_turn(tests.recall('theirs')::uuid, 'Hello', 'Hi.');
select tests.clear_authentication();
-- One turn extracted.
insert into memory.memory_extractions (source_message_id, user_id)
select min(m.id), tests.recall('owner')::uuid from memory.messages as m where m.conversation_id = tests.recall('conv')::uuid;

select tests.authenticate_as_anon();
select throws_ok($$select * from memory.memory_metrics()$$, '42501', null, 'anon cannot read metrics');

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select user_id, day, answers, answers_with_memories, answers_held_out, memories_added, memory_references, extractions
    from memory.memory_metrics()$$,
    $$values (tests.recall('owner')::uuid, (now() at time zone 'UTC')::date, 3, 1, 1, 2, 2, 1)$$,
    'the owner reads their own day: 3 answers, 1 using memories, 1 held out, 2 added, 2 references, 1 extracted'
);
select is_empty(
    $$select * from memory.memory_metrics(p_user_id => tests.recall('stranger')::uuid)$$,
    'the owner reads nothing of another user'
);
select is_empty(
    $$select * from memory.memory_metrics(now() + interval '1 day')$$,
    'nothing since a time to come'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select results_eq(
    $$select user_id, answers from memory.memory_metrics()$$,
    $$values (tests.recall('stranger')::uuid, 1)$$,
    'a participant of the owner''s conversation reads only their own answers'
);
select is_empty(
    $$select * from memory.memory_metrics(p_user_id => tests.recall('owner')::uuid)$$,
    'a participant reads nothing of the owner'
);

select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select answers, memories_added from memory.memory_metrics(p_user_id => tests.recall('owner')::uuid)$$,
    $$values (3, 2)$$,
    'the owner''s tenant admin reads the owner''s figures'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select * from memory.memory_metrics(p_user_id => tests.recall('owner')::uuid)$$,
    'another tenant''s admin reads nothing'
);

select tests.authenticate_as_service_role();
select results_eq(
    $$select user_id, answers from memory.memory_metrics()
    where user_id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid) order by answers desc$$,
    $$values (tests.recall('owner')::uuid, 3), (tests.recall('stranger')::uuid, 1)$$,
    'the service role reads every user'
);

select * from finish();
rollback;
