-- memory.delete_conversation(conversation, user): seed 001's delete_session. Deletes the conversation
-- with its messages and returns how many turns went with it; a missing conversation, or one the
-- caller may not delete, is not found (P0002) and stays.
begin;
select plan(15);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-delete-conversation');
select tests.remember('participant', tests.create_auth_user('rpc-delete-conversation.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Delete me', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 2) as i;
select memory.add_message(tests.recall('conv')::uuid, 'user', 'q3, open');
select tests.remember('other', (memory.create_conversation(tests.recall('owner')::uuid, 'Other', p_window_turns => 1000)).id);
select memory.add_turn(tests.recall('other')::uuid, 'q', 'a');

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.delete_conversation(tests.recall('conv')::uuid)$$, '42501', null, 'anon cannot delete');

-- Nobody else deletes it: not found.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select memory.delete_conversation(tests.recall('conv')::uuid)$$, 'P0002', null, 'a stranger gets not found');
select tests.authenticate_as(tests.recall('participant')::uuid);
select throws_ok($$select memory.delete_conversation(tests.recall('conv')::uuid)$$, 'P0002', null, 'a participant gets not found');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select memory.delete_conversation(tests.recall('conv')::uuid)$$, 'P0002', null, 'tenant A''s admin gets not found');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok($$select memory.delete_conversation(tests.recall('conv')::uuid)$$, 'P0002', null, 'tenant B''s admin gets not found');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid),
    5,
    'the conversation and its messages survived the attempts'
);

-- The owner deletes it and learns how many turns went (two complete, one open).
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.delete_conversation(tests.recall('conv')::uuid), 3, 'the owner deletes the conversation: 3 turns');
select is_empty($$select id from memory.conversations where id = tests.recall('conv')::uuid$$, 'the conversation is gone');
select throws_ok(
    $$select memory.delete_conversation(tests.recall('conv')::uuid)$$,
    'P0002', 'conversation not found', 'deleting it again is not found'
);
select throws_ok($$select memory.delete_conversation(gen_random_uuid())$$, 'P0002', null, 'a missing id is not found');
select tests.clear_authentication();
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    'its messages went with it'
);

-- service_role deletes anyone's conversation; acting for a user, only theirs.
select tests.authenticate_as_service_role();
select throws_ok(format('select memory.delete_conversation(%L, %L)', tests.recall('other'), tests.recall('stranger')),
    'P0002', null, 'service_role acting for a stranger gets not found');
select isnt_empty($$select id from memory.conversations where id = tests.recall('other')::uuid$$, 'and it stays');
select is(memory.delete_conversation(tests.recall('other')::uuid), 1, 'service_role deletes the owner''s other conversation: 1 turn');
select is_empty($$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$, 'the owner has no conversation left');

select * from finish();
rollback;
