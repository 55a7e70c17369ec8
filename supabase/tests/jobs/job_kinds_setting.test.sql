-- The job_kinds setting decides which kinds the database queues at all: an app that runs no
-- workers sets it to [] and its conversations leave no jobs behind.
begin;
select plan(4);

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

select * from finish();
rollback;
