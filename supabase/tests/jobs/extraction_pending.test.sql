-- memory.extraction_pending counts a conversation's questions whose extraction still waits: noted
-- by their turn, or held by an extract job that has not finished. It falls to 0 as the jobs finish
-- (done or dead), so a caller that asked for an extraction knows when the memories it gives are
-- there. The owner, the tenant's admin and the service role get the count; a stranger and another
-- tenant's admin get 0; anon may not call it.
begin;
select plan(14);

select tests.create_cast('extraction-pending');
update memory_private.settings set value = '1000' where key = 'summary_interval';
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;
select tests.remember('talk', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Talk', 'profile', tests.recall('profile')::uuid)).id);
select tests.remember('generic', (memory.create_conversation(tests.recall('owner')::uuid, 'Chat', 'chat')).id);

select is(memory.extraction_pending(tests.recall('talk')::uuid), 0, 'a conversation without turns waits for nothing');
select memory.add_turn(tests.recall('talk')::uuid, 'I keep bees', 'Sweet.');
select memory.add_turn(tests.recall('talk')::uuid, 'I sell the honey at the market', 'Good business.');
select memory.add_message(tests.recall('talk')::uuid, 'user', 'And candles too');
select is(memory.extraction_pending(tests.recall('talk')::uuid), 2, 'the questions of finished turns wait, noted by their turns');
select memory.add_turn(tests.recall('generic')::uuid, 'I keep bees', 'Sweet.');
select is(memory.extraction_pending(tests.recall('generic')::uuid), 0, 'a closed gate leaves nothing to wait for');

-- As a caller sees it.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.extraction_pending(tests.recall('talk')::uuid), 2, 'the owner gets the count');
select is(memory.request_extraction(tests.recall('talk')::uuid), 1, 'asking for the rest queues the unanswered question');
select is(memory.extraction_pending(tests.recall('talk')::uuid), 3, 'and it waits too');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.extraction_pending(tests.recall('talk')::uuid), 3, 'the tenant''s admin gets the count');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(memory.extraction_pending(tests.recall('talk')::uuid), 0, 'another tenant''s admin gets 0');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.extraction_pending(tests.recall('talk')::uuid), 0, 'a stranger gets 0');
select tests.authenticate_as_anon();
select throws_ok(
    format('select memory.extraction_pending(%L)', tests.recall('talk')),
    '42501', null, 'anon may not call it'
);
select tests.authenticate_as_service_role();

-- Notes turned into jobs still wait; finished jobs do not, done or dead.
select memory_private.queue_pending_extractions();
select is(memory.extraction_pending(tests.recall('talk')::uuid), 3, 'queued jobs wait');
update memory_private.jobs set status = 'running', leased_until = now() + interval '1 minute'
where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('talk');
select is(memory.extraction_pending(tests.recall('talk')::uuid), 3, 'running jobs wait');
with one as (
    select id from memory_private.jobs
    where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('talk') order by id limit 1
)
update memory_private.jobs as j set status = 'done', leased_until = null, finished_at = now() from one where j.id = one.id;
select is(memory.extraction_pending(tests.recall('talk')::uuid), 2, 'a finished job no longer waits');
update memory_private.jobs set status = 'dead', leased_until = null, finished_at = now()
where kind = 'extract' and payload ->> 'conversation_id' = tests.recall('talk') and status = 'running';
select is(memory.extraction_pending(tests.recall('talk')::uuid), 0, 'nor do dead jobs: nothing is left to wait for');

select * from finish();
rollback;
