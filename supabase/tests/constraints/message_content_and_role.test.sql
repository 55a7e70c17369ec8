-- memory.messages refuses bad rows on every write path, not only through add_message: content
-- must contain a non-space character, the role is 'user' or 'assistant', metadata is an object and
-- tool_calls an array, and content is at most 100,000 characters, each said in words (22023;
-- add_turn says which message is too long), and a missing role or content is 23502.
begin;
select plan(13);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('constraints-content');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, p_window_turns => 1000)).id);

-- Through the Data API, as the owner.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', '')$$,
    '22023', 'content must not be empty', 'empty content is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', E'  \n\t ')$$,
    '22023', 'content must not be empty', 'whitespace-only content is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'system', 'You are a bot')$$,
    '22023', 'invalid role ''system''', 'a role other than user or assistant is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, null, 'Who said this?')$$,
    '23502', null, 'a missing role is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', null)$$,
    '23502', null, 'missing content is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, metadata) values (tests.recall('conv')::uuid, 'user', 'hi', '[1]')$$,
    '22023', 'metadata must be a JSON object, not array', 'metadata must be a JSON object'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, tool_calls)
    values (tests.recall('conv')::uuid, 'assistant', 'hi', '{"name": "chart"}')$$,
    '22023', 'tool_calls must be a JSON array, not object', 'tool_calls must be a JSON array'
);

-- The same rules hold for service_role, which bypasses RLS but not constraints.
select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'assistant', ' ')$$,
    '22023', 'content must not be empty', 'service_role cannot write whitespace-only content either'
);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, repeat('x', 100001), 'answer')$$,
    '22023', 'content must be at most 100000 characters', 'a question of more than 100,000 characters is refused'
);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'question', repeat('y', 100001))$$,
    '22023', 'response must be at most 100000 characters', 'an answer of more than 100,000 characters is refused, and the question with it'
);

-- None of the refused rows was written, and none took a turn number.
select tests.clear_authentication();
select is(
    (select last_turn from memory.conversations where id = tests.recall('conv')::uuid),
    0,
    'the refused messages left no trace: the turn counter is still 0'
);

-- No update can blank a message either; 100,000 characters are accepted.
select memory.add_message(tests.recall('conv')::uuid, 'user', repeat('z', 100000));
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.messages set content = '' where conversation_id = tests.recall('conv')::uuid$$,
    '22023', 'content must not be empty', 'no update can blank a message, and the refusal says so'
);
select throws_ok(
    $$update memory.messages set role = 'system' where conversation_id = tests.recall('conv')::uuid$$,
    '22023', 'invalid role ''system''', 'nor give it a role other than user or assistant'
);

select * from finish();
rollback;
