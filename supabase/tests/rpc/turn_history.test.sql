-- memory.turn_history(conversation, max_turns): the newest max_turns turns, oldest first, each a
-- question paired with its answer; max_turns is 1..500 (22023); callers see only the turns of a
-- conversation they may read. The body (memory_private.turn_history, which prompt_context calls)
-- runs as the owner after one access check, and holds the same answers called directly.
begin;
select plan(18);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-turn-history');
select tests.remember('participant', tests.create_auth_user('rpc-turn-history.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Turn history', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 12) as i;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory.turn_history(tests.recall('conv')::uuid)$$,
    '42501', null, 'anon cannot read turn history'
);
select throws_ok(
    $$select * from memory_private.turn_history(tests.recall('conv')::uuid, 10)$$,
    '42501', null, 'nor its body'
);

-- The owner reads the newest turns, oldest first.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number from memory.turn_history(tests.recall('conv')::uuid)$$,
    array[3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    'by default the newest 10 turns, oldest first'
);
select results_eq(
    $$select turn_number, user_content, assistant_content from memory.turn_history(tests.recall('conv')::uuid, 3)$$,
    $$values (10, 'q10', 'a10'), (11, 'q11', 'a11'), (12, 'q12', 'a12')$$,
    'max_turns 3: turns 10 to 12, each question with its answer'
);
select memory.add_message(tests.recall('conv')::uuid, 'user', 'q13, not answered yet');
select results_eq(
    $$select turn_number, assistant_content from memory.turn_history(tests.recall('conv')::uuid, 2)$$,
    $$values (12, 'a12'), (13, null)$$,
    'an open turn (a question without its answer yet) is the newest turn'
);
select results_eq(
    $$select count(*)::integer from memory.turn_history(tests.recall('conv')::uuid, 500)$$,
    array[13],
    'max_turns 500 is allowed and returns every turn'
);

-- Bounds are checked.
select throws_ok($$select * from memory.turn_history(tests.recall('conv')::uuid, 0)$$, '22023', null, 'max_turns 0 is refused');
select throws_ok($$select * from memory.turn_history(tests.recall('conv')::uuid, 501)$$, '22023', null, 'max_turns 501 is refused');
select throws_ok($$select * from memory.turn_history(tests.recall('conv')::uuid, null)$$, '22023', null, 'a null max_turns is refused');
select is_empty($$select * from memory.turn_history(gen_random_uuid())$$, 'a missing conversation has no turns');

-- A stranger reads nothing; a participant and tenant A's admin read; tenant B's admin does not.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select * from memory.turn_history(tests.recall('conv')::uuid)$$,
    'a stranger reads no turn of the owner'
);
select is_empty(
    $$select * from memory_private.turn_history(tests.recall('conv')::uuid, 10)$$,
    'not even through the body'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select turn_number from memory.turn_history(tests.recall('conv')::uuid, 2)$$,
    array[12, 13],
    'a participant reads the shared turns'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select turn_number from memory.turn_history(tests.recall('conv')::uuid, 2)$$,
    array[12, 13],
    'tenant A''s admin reads the owner''s turns'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number from memory_private.turn_history(tests.recall('conv')::uuid, 2)$$,
    array[12, 13],
    'the owner reads the same turns through the body'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select * from memory.turn_history(tests.recall('conv')::uuid)$$,
    'tenant B''s admin reads no turn of tenant A'
);
select is_empty(
    $$select * from memory_private.turn_history(tests.recall('conv')::uuid, 10)$$,
    'not even through the body'
);

-- service_role reads anyone's turns.
select tests.authenticate_as_service_role();
select results_eq(
    $$select turn_number from memory.turn_history(tests.recall('conv')::uuid, 1)$$,
    array[13],
    'service_role reads the owner''s turns'
);

select * from finish();
rollback;
