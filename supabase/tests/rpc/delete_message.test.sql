-- memory.delete_message(id): seed 003's delete_message. The owner (or service_role) deletes a
-- message; a message that is missing, or that the caller may not delete, is reported as not
-- found (P0002) instead of succeeding silently, and stays.
begin;
select plan(12);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-delete-message');
select tests.remember('participant', tests.create_auth_user('rpc-delete-message.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Delete', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select tests.remember('q1', user_message_id), tests.remember('a1', assistant_message_id)
from memory.add_turn(tests.recall('conv')::uuid, 'q1', 'a1');

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.delete_message(tests.recall('q1')::bigint)$$, '42501', null, 'anon cannot delete a message');

-- Nobody else deletes the owner's message: not found.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select memory.delete_message(tests.recall('q1')::bigint)$$, 'P0002', null, 'a stranger gets not found');
select tests.authenticate_as(tests.recall('participant')::uuid);
select throws_ok($$select memory.delete_message(tests.recall('q1')::bigint)$$, 'P0002', null, 'a participant gets not found');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select memory.delete_message(tests.recall('q1')::bigint)$$, 'P0002', null, 'tenant A''s admin gets not found');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok($$select memory.delete_message(tests.recall('q1')::bigint)$$, 'P0002', null, 'tenant B''s admin gets not found');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid),
    2,
    'both messages survived the attempts'
);

-- The owner deletes; a second delete, or a missing id, is not found.
select tests.authenticate_as(tests.recall('owner')::uuid);
select lives_ok($$select memory.delete_message(tests.recall('q1')::bigint)$$, 'the owner deletes their message');
select is_empty($$select id from memory.messages where id = tests.recall('q1')::bigint$$, 'the message is gone');
select throws_ok(
    $$select memory.delete_message(tests.recall('q1')::bigint)$$,
    'P0002', format('message %s not found', tests.recall('q1')), 'deleting it again is not found'
);
select throws_ok($$select memory.delete_message(-1)$$, 'P0002', null, 'a missing id is not found');

-- service_role deletes anyone's message.
select tests.authenticate_as_service_role();
select lives_ok($$select memory.delete_message(tests.recall('a1')::bigint)$$, 'service_role deletes the owner''s message');
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    'the conversation has no message left'
);

select * from finish();
rollback;
