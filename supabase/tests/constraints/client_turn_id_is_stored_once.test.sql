-- metadata.client_turn_id is an idempotency key: a turn written back twice under the same id is
-- refused (23505) and leaves the first copy alone; other users and other ids are unaffected.
begin;
select plan(5);

select tests.create_cast('client-turn-id');
select tests.authenticate_as_service_role();
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid)).id);
select tests.remember('other', (memory.create_conversation(tests.recall('stranger')::uuid)).id);
select memory.add_turn(tests.recall('conv')::uuid, 'q', 'a', p_metadata => '{"client_turn_id": "t-1"}');

select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q again', 'a again', p_metadata => '{"client_turn_id": "t-1"}')$$,
    '23505', null, 'the same client turn id is not stored twice'
);
select results_eq(
    $$select role, content from memory.messages where conversation_id = tests.recall('conv')::uuid order by id$$,
    $$values ('user', 'q'), ('assistant', 'a')$$,
    'the first copy stays as it was'
);
select lives_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q2', 'a2', p_metadata => '{"client_turn_id": "t-2"}')$$,
    'another id is another turn'
);
select lives_ok(
    $$select memory.add_turn(tests.recall('other')::uuid, 'q', 'a', p_metadata => '{"client_turn_id": "t-1"}')$$,
    'another user may use the same id'
);
select lives_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q3', 'a3'), memory.add_turn(tests.recall('conv')::uuid, 'q4', 'a4')$$,
    'turns without a client id are not constrained'
);

select * from finish();
rollback;
