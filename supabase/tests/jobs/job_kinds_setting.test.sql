-- The job_kinds setting decides which kinds the database queues at all: an app that runs no
-- workers sets it to [] and its conversations leave no jobs behind (their notes wait). The questions noted for
-- extraction while extract is left out wait, as embed notes do: a pause loses no turn.
begin;
select plan(8);

select tests.authenticate_as_service_role();
select tests.remember('u', memory.user_id_for('jobs-kinds.u'));
select tests.remember('c', (memory.create_conversation(tests.recall('u')::uuid)).id);

select memory.add_turn(tests.recall('c')::uuid, 'first question', 'first answer');
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('u')::uuid and kind = 'title'),
    1, 'by default the first turn queues a title'
);

select tests.clear_authentication();
update memory_private.settings set value = '["extract"]' where key = 'job_kinds';
select tests.authenticate_as_service_role();
select tests.remember('c2', (memory.create_conversation(tests.recall('u')::uuid)).id);
select memory.add_turn(tests.recall('c2')::uuid, 'q', 'a');
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('u')::uuid and kind = 'title'),
    1, 'with title left out of job_kinds, a new conversation queues no title'
);
select is(memory_private.enqueue('title', '{}', 'jobs-kinds-direct'), null, 'enqueue of a disabled kind returns null');
select isnt(memory_private.enqueue('extract', '{}', 'jobs-kinds-direct'), null, 'an enabled kind is queued');

-- A turn while extract is left out: its question is noted, and the pass that turns notes into
-- jobs leaves the note where it was.
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Main', true) returning id
)
select tests.remember('p', id) from p;
select tests.remember('c3', (memory.create_conversation(
    tests.recall('u')::uuid, null, 'profile', tests.recall('p')::uuid)).id);
select tests.clear_authentication();
update memory_private.settings set value = '[]' where key = 'job_kinds';
select tests.authenticate_as_service_role();
select memory.add_turn(tests.recall('c3')::uuid, 'I keep bees on the roof', 'How many hives?');
select tests.remember('question', (
    select m.id from memory.messages as m where m.conversation_id = tests.recall('c3')::uuid and m.role = 'user'
));
select tests.clear_authentication();
select is(memory_private.queue_pending_extractions(), 0, 'with extract left out, the pass takes no note');
select ok(
    exists (select 1 from memory_private.pending_extractions where message_id = tests.recall('question')::bigint),
    'the question noted while extract was left out waits'
);
-- extract is back: the waiting note becomes its job.
update memory_private.settings set value = '["extract"]' where key = 'job_kinds';
select cmp_ok(memory_private.queue_pending_extractions(), '>=', 1, 'with extract back, the pass takes the waiting note');
select is(
    (select count(*)::integer from memory_private.jobs
    where kind = 'extract' and dedup_key = 'message:' || tests.recall('question')),
    1, 'and queues the extraction of the question asked during the pause'
);

select * from finish();
rollback;
