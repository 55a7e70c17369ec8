-- memory.add_turn(conversation, question, answer, ...): stores a question and its answer as one
-- turn, atomically (both messages or neither); only the conversation's owner (or service_role)
-- writes; the answer carries the tool calls, suggestions and memory ids.
begin;
select plan(19);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-add-turn');
select tests.remember('participant', tests.create_auth_user('rpc-add-turn.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Turns', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q', 'a')$$,
    '42501', null, 'anon cannot add a turn'
);

-- The owner adds turns: numbered 1, 2, ... with both message ids.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number, user_message_id < assistant_message_id
    from memory.add_turn(tests.recall('conv')::uuid, 'What is my sign?', 'Leo.', '{"source": "test"}')$$,
    $$values (1, true)$$,
    'the first turn is number 1 and returns both message ids'
);
select results_eq(
    $$select role, content, turn_number, metadata ->> 'source' from memory.messages
    where conversation_id = tests.recall('conv')::uuid order by id$$,
    $$values ('user', 'What is my sign?', 1, 'test'), ('assistant', 'Leo.', 1, 'test')$$,
    'both messages are stored under turn 1 with the metadata'
);
select results_eq(
    $$select turn_number from memory.add_turn(
        tests.recall('conv')::uuid, 'And my moon?', 'Pisces.',
        p_tool_calls => '[{"name": "chart"}]', p_suggested_values => '["Sun"]',
        p_suggested_actions => '[{"label": "More"}]', p_custom_payload => '{"card": 1}',
        p_used_memory_ids => array['00000000-0000-4000-8000-000000000001'::uuid]
    )$$,
    array[2],
    'the next turn is number 2'
);
select results_eq(
    $$select tool_calls, suggested_values, suggested_actions, custom_payload, used_memory_ids
    from memory.messages where conversation_id = tests.recall('conv')::uuid and turn_number = 2 and role = 'assistant'$$,
    $$values ('[{"name": "chart"}]'::jsonb, '["Sun"]'::jsonb, '[{"label": "More"}]'::jsonb, '{"card": 1}'::jsonb,
        array['00000000-0000-4000-8000-000000000001'::uuid])$$,
    'the answer carries tool calls, suggestions, payload and the memories used'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'From my friend', 'Noted.');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select role, author_id from memory.messages where conversation_id = tests.recall('conv')::uuid and turn_number = 3
    order by id$$,
    $$values ('user', tests.recall('participant')::uuid), ('assistant', null)$$,
    'in together mode a participant posts from their own session; the question records them as its author (the answer has none)'
);

-- Atomic: a turn whose answer is refused leaves no question behind.
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'Orphan question?', '   ')$$,
    '22023', 'response must not be empty', 'a blank answer is refused'
);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'Orphan question?', 'Bad tools', p_tool_calls => '{"not": "an array"}')$$,
    '22023', 'tool_calls must be a JSON array, not object', 'an answer refused (tool_calls not an array) fails the turn'
);
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid and content = 'Orphan question?'$$,
    'neither failed turn left its question behind'
);
select results_eq(
    $$select count(*)::integer, max(turn_number) from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    $$values (6, 3)$$,
    'the failed turns consumed no turn number'
);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'Next', 'Answer')$$,
    array[4],
    'the next good turn is number 4, gap-free'
);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, '', 'Answer without a question')$$,
    '22023', 'content must not be empty', 'a blank question is refused'
);
select throws_ok(
    $$select memory.add_turn(gen_random_uuid(), 'q', 'a')$$,
    'P0002', 'conversation not found', 'a missing conversation is reported as not found'
);

-- A stranger and the tenant admins cannot add turns to the owner's conversation; a participant
-- cannot add one in the owner's name.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q', 'a')$$,
    'P0002', 'conversation not found', 'a stranger cannot add a turn (not found: existence is not revealed)'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q', 'a', p_author_id => tests.recall('owner')::uuid)$$,
    '42501', 'only the author writes their own words', 'a participant cannot add a turn in the owner''s name'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q', 'a')$$,
    '42501', null, 'tenant A''s admin cannot add a turn'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q', 'a')$$,
    'P0002', 'conversation not found', 'tenant B''s admin cannot add a turn (not found)'
);

-- service_role adds turns to anyone's conversation.
select tests.authenticate_as_service_role();
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'Server side', 'Done')$$,
    array[5],
    'service_role adds a turn to the owner''s conversation'
);
select tests.clear_authentication();
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[10],
    'five complete turns: ten messages'
);

select * from finish();
rollback;
