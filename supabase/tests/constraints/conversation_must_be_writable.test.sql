-- A message goes only to a conversation that exists, is live and is not archived: an archived
-- conversation is 55000 (unarchive it first), a missing or expired one is P0002. This holds for
-- every writer, service_role included, and a refused write changes nothing.
begin;
select plan(10);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('constraints-writable');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, p_window_turns => 1000)).id);
select memory.add_turn(tests.recall('conv')::uuid, 'q1', 'a1');
select tests.remember(
    'expired', (memory.create_conversation(tests.recall('owner')::uuid, p_ttl => interval '1 hour', p_window_turns => 1000)).id
);
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('expired')::uuid;

-- Archived: 55000 for the owner (RPC and Data API) and for service_role.
select tests.authenticate_as(tests.recall('owner')::uuid);
update memory.conversations set archived = true where id = tests.recall('conv')::uuid;
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q2', 'a2')$$,
    '55000', 'conversation is archived', 'add_turn to an archived conversation is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', 'q2')$$,
    '55000', null, 'a Data API insert into an archived conversation is refused'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'assistant', 'late answer')$$,
    '55000', null, 'service_role cannot write to an archived conversation either'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select last_turn from memory.conversations where id = tests.recall('conv')::uuid), 1,
    'the refused writes took no turn number'
);
update memory.conversations set archived = false where id = tests.recall('conv')::uuid;
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'q2', 'a2')$$,
    array[2],
    'once unarchived the conversation takes turn 2'
);

-- Missing: P0002.
select throws_ok(
    $$select memory.add_turn(gen_random_uuid(), 'q', 'a')$$,
    'P0002', 'conversation not found', 'add_turn to a missing conversation is not found'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (gen_random_uuid(), 'user', 'q')$$,
    'P0002', null, 'a Data API insert into a missing conversation is not found'
);

-- Expired: P0002 as if missing, even before the sweep deletes it.
select throws_ok(
    $$select memory.add_turn(tests.recall('expired')::uuid, 'q', 'a')$$,
    'P0002', null, 'add_turn to an expired conversation is not found'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.add_message(tests.recall('expired')::uuid, 'user', 'q')$$,
    'P0002', null, 'service_role cannot revive an expired conversation by writing to it'
);
select tests.clear_authentication();
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('expired')::uuid$$,
    'the expired conversation received nothing'
);

select * from finish();
rollback;
