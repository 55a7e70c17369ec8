-- memory.count_messages(conversation): seed 003's history count, of live messages only, as far as
-- the caller may read them (others count 0, not an error that would confirm the id exists).
begin;
select plan(9);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-count');
select tests.remember('participant', tests.create_auth_user('rpc-count.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Count', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 3) as i;
select memory.add_message(tests.recall('conv')::uuid, 'user', 'q4');

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.count_messages(tests.recall('conv')::uuid)$$, '42501', null, 'anon cannot count messages');

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.count_messages(tests.recall('conv')::uuid), 7::bigint, 'the owner counts their 7 messages');
select is(memory.count_messages(gen_random_uuid()), 0::bigint, 'a missing conversation counts 0');

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.count_messages(tests.recall('conv')::uuid), 0::bigint, 'a stranger counts 0');

select tests.authenticate_as(tests.recall('participant')::uuid);
select is(memory.count_messages(tests.recall('conv')::uuid), 7::bigint, 'a participant counts the shared messages');

select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.count_messages(tests.recall('conv')::uuid), 7::bigint, 'tenant A''s admin counts the owner''s messages');

select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(memory.count_messages(tests.recall('conv')::uuid), 0::bigint, 'tenant B''s admin counts 0');

select tests.authenticate_as_service_role();
select is(memory.count_messages(tests.recall('conv')::uuid), 7::bigint, 'service_role counts the owner''s messages');

-- Expired messages do not count, for anyone (not even service_role), before any sweep.
select tests.clear_authentication();
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('conv')::uuid and turn_number = 1;
select tests.authenticate_as_service_role();
select is(memory.count_messages(tests.recall('conv')::uuid), 5::bigint, 'expired messages are not counted');

select * from finish();
rollback;
