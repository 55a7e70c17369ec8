-- The arguments that let an app server (service_role) keep its users' conversations apart:
-- current_conversation's p_match separates kinds of conversation of one user, create_conversation
-- takes a client-chosen id, and add_message / add_turn with p_user_id refuse a conversation of
-- anyone else as not found (P0002), writing nothing.
begin;
select plan(10);

select tests.authenticate_as_service_role();
select tests.remember('ana', memory.user_id_for('scoping-ana'));
select tests.remember('ben', memory.user_id_for('scoping-ben'));

-- p_match: a store's running conversation is not another store's.
select tests.remember('chat', (memory.current_conversation(tests.recall('ana')::uuid, p_match => '{"store": "chat"}')).id);
select tests.remember('history', (memory.current_conversation(tests.recall('ana')::uuid, p_match => '{"store": "history"}')).id);
select isnt(tests.recall('chat'), tests.recall('history'), 'two matches give two current conversations');
select is(
    (memory.current_conversation(tests.recall('ana')::uuid, p_match => '{"store": "chat"}')).id::text,
    tests.recall('chat'),
    'the same match returns the same conversation'
);
select is(
    (select metadata from memory.conversations where id = tests.recall('chat')::uuid),
    '{"store": "chat"}'::jsonb,
    'a conversation created for a match carries it as metadata'
);

-- p_id: the client may choose the id; a taken id is a conflict.
select is(
    (memory.create_conversation(tests.recall('ana')::uuid, p_id => '00000000-0000-4000-8000-00000000a11a')).id,
    '00000000-0000-4000-8000-00000000a11a'::uuid,
    'create_conversation keeps a chosen id'
);
select throws_ok(
    $$select memory.create_conversation(tests.recall('ben')::uuid, p_id => '00000000-0000-4000-8000-00000000a11a')$$,
    '23505', 'conversation id 00000000-0000-4000-8000-00000000a11a is taken', 'a chosen id that is taken is refused'
);

-- p_user_id: writing as Ben into Ana's conversation is "not found", and nothing is written.
select throws_ok(
    format('select memory.add_turn(%L, %L, %L, p_user_id => %L)', tests.recall('chat'), 'q', 'a', tests.recall('ben')),
    'P0002', 'conversation not found', 'add_turn for another user''s conversation is not found'
);
select throws_ok(
    format('select memory.add_message(%L, %L, %L, p_user_id => %L)', tests.recall('chat'), 'user', 'q', tests.recall('ben')),
    'P0002', 'conversation not found', 'add_message for another user''s conversation is not found'
);
select is(memory.count_messages(tests.recall('chat')::uuid), 0::bigint, 'nothing was written');
select is(
    (memory.add_turn(tests.recall('chat')::uuid, 'q', 'a', p_user_id => tests.recall('ana')::uuid)).turn_number,
    1, 'the owner named as p_user_id writes'
);
select is(memory.count_messages(tests.recall('chat')::uuid), 2::bigint, 'both messages of the turn are stored');

select * from finish();
rollback;
