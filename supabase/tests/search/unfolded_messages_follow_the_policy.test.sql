-- memory_private.unfolded_messages(user, after): the lexemes of a user's messages after an id, as
-- lexical search counts the ones the term fold has not reached. It runs with the caller's rights,
-- so the messages policy decides: the owner, their tenant's admin and the service role read them;
-- a stranger and another tenant's admin read none; anon may not call it.
begin;
select plan(7);

select tests.create_cast('unfolded-messages');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Unfolded')).id);
select memory.add_turn(tests.recall('conv')::uuid, 'Where is the kayak?', 'In the garage.');
select tests.remember('first', (
    select min(m.id) from memory.messages as m where m.conversation_id = tests.recall('conv')::uuid
));

select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)$$, '42501', null, 'anon may not call it'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    array(select u::text from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0) as u),
    array[to_tsvector('english', 'Where is the kayak?')::text, to_tsvector('english', 'In the garage.')::text],
    'the owner reads their messages'' lexemes, oldest first'
);
select is(
    (select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, tests.recall('first')::bigint)),
    1::bigint,
    'only the messages after the id'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 0::bigint,
    'a stranger reads none');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 2::bigint,
    'the owner''s tenant admin reads them');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 0::bigint,
    'another tenant''s admin reads none');
select tests.authenticate_as_service_role();
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 2::bigint,
    'the service role reads them');

select * from finish();
rollback;
