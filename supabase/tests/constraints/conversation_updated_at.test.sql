-- Seed 002's conversations.updated_at (ON UPDATE CURRENT_TIMESTAMP): a rename, archiving or any
-- other change of the conversation moves it, as a new turn does, so the list's order follows what
-- the user did last; an update that changes nothing, or only the retention clock, leaves it.
begin;
select plan(6);

select tests.create_cast('conversation-updated-at');
select tests.remember('older', (memory.create_conversation(tests.recall('owner')::uuid, 'Older')).id);
select tests.remember('newer', (memory.create_conversation(tests.recall('owner')::uuid, 'Newer')).id);
update memory.conversations set updated_at = now() - interval '2 days' where id = tests.recall('older')::uuid;
update memory.conversations set updated_at = now() - interval '1 day' where id = tests.recall('newer')::uuid;
select is(
    (select updated_at from memory.conversations where id = tests.recall('older')::uuid), now() - interval '2 days',
    'setting updated_at alone keeps what was set'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
update memory.conversations set title = 'Older, renamed' where id = tests.recall('older')::uuid;
select is((select updated_at from memory.conversations where id = tests.recall('older')::uuid), now(), 'a rename moves it');
select results_eq(
    format($$select id from memory.list_conversations(%L) order by updated_at desc$$, tests.recall('owner')),
    format($$values (%L::uuid), (%L::uuid)$$, tests.recall('older'), tests.recall('newer')),
    'the renamed conversation lists first'
);
update memory.conversations set title = 'Newer' where id = tests.recall('newer')::uuid;
select is((select updated_at from memory.conversations where id = tests.recall('newer')::uuid), now() - interval '1 day',
    'an update that changes nothing leaves it');
update memory.conversations set archived = true where id = tests.recall('newer')::uuid;
select is((select updated_at from memory.conversations where id = tests.recall('newer')::uuid), now(), 'archiving moves it');

select tests.clear_authentication();
update memory.conversations set updated_at = now() - interval '3 days' where id = tests.recall('older')::uuid;
select memory.add_turn(tests.recall('older')::uuid, 'Hello', 'Hi.');
select is((select updated_at from memory.conversations where id = tests.recall('older')::uuid), now(), 'a turn moves it');

select * from finish();
rollback;
