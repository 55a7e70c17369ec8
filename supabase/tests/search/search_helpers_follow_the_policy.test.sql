-- The statements lexical search runs in helpers of their own run with the caller's rights, so the
-- messages policy decides: memory_private.unfolded_messages(user, after), a user's messages after an
-- id (those the term fold has not reached) with their lexemes, and
-- memory_private.conversation_matches(user, conversation, query, limit), a conversation's newest
-- matches. The owner, their tenant's admin and the service role read them; a stranger and another
-- tenant's admin read none; anon may not call them.
begin;
select plan(14);

select tests.create_cast('search-helpers');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Kayaks')).id);
select memory.add_turn(tests.recall('conv')::uuid, 'Where is the kayak?', 'In the garage.');
select memory.add_turn(tests.recall('conv')::uuid, 'And the other kayak?', 'On the roof.');
select tests.remember('first', (
    select min(m.id) from memory.messages as m where m.conversation_id = tests.recall('conv')::uuid
));
select tests.remember('kayaks', array(
    select m.id from memory.messages as m
    where m.conversation_id = tests.recall('conv')::uuid and m.content like '%kayak%' order by m.id desc
)::text);

select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)$$, '42501', null,
    'anon may not read unfolded messages'
);
select throws_ok(
    $$select * from memory_private.conversation_matches(tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 10)$$,
    '42501', null, 'anon may not read a conversation''s matches'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select u.id, u.search::text from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0) as u
    order by u.id desc$$,
    format($$values (%s + 3::bigint, %L), (%s + 2, %L), (%s + 1, %L), (%s, %L)$$,
        tests.recall('first'), to_tsvector('english', 'On the roof.'),
        tests.recall('first'), to_tsvector('english', 'And the other kayak?'),
        tests.recall('first'), to_tsvector('english', 'In the garage.'),
        tests.recall('first'), to_tsvector('english', 'Where is the kayak?')),
    'the owner reads their messages and their lexemes'
);
select is(
    (select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, tests.recall('first')::bigint)),
    3::bigint,
    'only the messages after the id'
);
select is(
    array(select x.id from memory_private.conversation_matches(
        tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 10
    ) as x),
    tests.recall('kayaks')::bigint[],
    'the owner reads the conversation''s matches, newest first'
);
select is(
    (select count(*) from memory_private.conversation_matches(tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 1)),
    1::bigint,
    'at most the limit'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 0::bigint,
    'a stranger reads no unfolded message');
select is(
    (select count(*) from memory_private.conversation_matches(tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 10)),
    0::bigint, 'nor a match'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 4::bigint,
    'the owner''s tenant admin reads the unfolded messages');
select is(
    (select count(*) from memory_private.conversation_matches(tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 10)),
    2::bigint, 'and the matches'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 0::bigint,
    'another tenant''s admin reads no unfolded message');
select is(
    (select count(*) from memory_private.conversation_matches(tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 10)),
    0::bigint, 'nor a match'
);
select tests.authenticate_as_service_role();
select is((select count(*) from memory_private.unfolded_messages(tests.recall('owner')::uuid, 0)), 4::bigint,
    'the service role reads the unfolded messages');
select is(
    (select count(*) from memory_private.conversation_matches(tests.recall('owner')::uuid, tests.recall('conv')::uuid, 'kayak', 10)),
    2::bigint, 'and the matches'
);

select * from finish();
rollback;
