-- memory.clear_conversation(conversation): seed 003's clear history. The messages go, the
-- conversation stays, and turn numbers keep counting up (a number never names two turns). Only the
-- owner or service_role clears; for anyone else it deletes nothing (0).
begin;
select plan(14);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-clear');
select tests.remember('participant', tests.create_auth_user('rpc-clear.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Clear', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 3) as i;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.clear_conversation(tests.recall('conv')::uuid)$$, '42501', null, 'anon cannot clear');

-- Nobody but the owner clears: they delete nothing and the messages stay.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.clear_conversation(tests.recall('conv')::uuid), 0, 'a stranger clears nothing');
select tests.authenticate_as(tests.recall('participant')::uuid);
select is(memory.clear_conversation(tests.recall('conv')::uuid), 0, 'a participant clears nothing');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.clear_conversation(tests.recall('conv')::uuid), 0, 'tenant A''s admin clears nothing');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(memory.clear_conversation(tests.recall('conv')::uuid), 0, 'tenant B''s admin clears nothing');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid),
    6,
    'after their attempts all six messages remain'
);

-- The owner clears: messages gone, conversation kept, numbering continues.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.clear_conversation(tests.recall('conv')::uuid), 6, 'the owner clears six messages');
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    'no message is left'
);
select results_eq(
    $$select id from memory.conversations where id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('conv')::uuid)$$,
    'the conversation itself stays'
);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'q after clear', 'a after clear')$$,
    array[4],
    'the next turn is number 4: numbers are never reused'
);
select is(memory.clear_conversation(gen_random_uuid()), 0, 'clearing a missing conversation deletes nothing');

-- service_role clears anyone's conversation.
select tests.authenticate_as_service_role();
select is(memory.clear_conversation(tests.recall('conv')::uuid), 2, 'service_role clears the owner''s conversation');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid),
    0,
    'service_role''s clear left nothing'
);
select is(
    (select last_turn from memory.conversations where id = tests.recall('conv')::uuid),
    4,
    'clearing keeps the turn counter'
);

select * from finish();
rollback;
