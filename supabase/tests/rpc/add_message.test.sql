-- memory.add_message(conversation, role, content, ...): writes one message; the role is 'user' or
-- 'assistant' and the content is not blank (22023, nothing written); a question opens a turn and
-- an answer joins the open turn; only the owner (or service_role) writes.
begin;
select plan(20);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-add-message');
select tests.remember('participant', tests.create_auth_user('rpc-add-message.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Messages', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'hi')$$,
    '42501', null, 'anon cannot add a message'
);

-- The owner writes; the table numbers the turns.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (memory.add_message(tests.recall('conv')::uuid, 'user', 'First question')).turn_number,
    1,
    'a question opens turn 1'
);
select is(
    (memory.add_message(tests.recall('conv')::uuid, 'assistant', 'First answer')).turn_number,
    1,
    'the answer joins the open turn 1'
);
select is(
    (memory.add_message(tests.recall('conv')::uuid, 'assistant', 'An unprompted follow-up')).turn_number,
    2,
    'an answer with no open turn opens turn 2'
);
select is(
    (memory.add_message(tests.recall('conv')::uuid, 'user', 'Second question', '{"lang": "en"}')).turn_number,
    3,
    'the next question opens turn 3'
);
select results_eq(
    $$select user_id, author_id, metadata ->> 'lang' from memory.messages
    where conversation_id = tests.recall('conv')::uuid and turn_number = 3$$,
    $$values (tests.recall('owner')::uuid, null::uuid, 'en')$$,
    'the message belongs to the owner and keeps its metadata'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select is(
    (memory.add_message(tests.recall('conv')::uuid, 'user', 'Said by my friend')).author_id,
    tests.recall('participant')::uuid,
    'a participant''s message, posted from their own session, records them as its author'
);
select tests.authenticate_as(tests.recall('owner')::uuid);

-- Bad input is refused with 22023 and writes nothing.
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'system', 'You are a bot')$$,
    '22023', 'invalid role ''system''', 'an unknown role is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, null, 'No role')$$,
    '22023', null, 'a missing role is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', '')$$,
    '22023', 'content must not be empty', 'empty content is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', E' \t\n ')$$,
    '22023', 'content must not be empty', 'whitespace-only content is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', null)$$,
    '22023', 'content must not be empty', 'null content is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'By a stranger', p_author_id => tests.recall('stranger')::uuid)$$,
    '42501', 'only the author writes their own words', 'the owner cannot name someone else as the author'
);
select results_eq(
    $$select count(*)::integer, max(turn_number) from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    $$values (5, 4)$$,
    'refused messages wrote nothing and took no turn number'
);
select throws_ok(
    $$select memory.add_message(gen_random_uuid(), 'user', 'Into the void')$$,
    'P0002', 'conversation not found', 'a missing conversation is reported as not found'
);

-- Nobody else writes to the owner's conversation, and a participant writes only as themselves.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'hi')$$,
    'P0002', 'conversation not found', 'a stranger cannot add a message (not found: existence is not revealed)'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'hi', p_author_id => tests.recall('owner')::uuid)$$,
    '42501', 'only the author writes their own words', 'a participant cannot add a message in the owner''s name'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'assistant', 'hi')$$,
    '42501', null, 'tenant A''s admin cannot add a message'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'assistant', 'hi')$$,
    'P0002', 'conversation not found', 'tenant B''s admin cannot add a message (not found)'
);

-- service_role writes to anyone's conversation: it answers the open turn 4.
select tests.authenticate_as_service_role();
select is(
    (memory.add_message(tests.recall('conv')::uuid, 'assistant', 'Answer from the server')).turn_number,
    4,
    'service_role adds a message to the owner''s conversation'
);

select * from finish();
rollback;
