-- A vector of zeros has no direction, so its cosine distance is NaN: a query embedding of zeros is
-- refused (22023), and a stored one is nobody's neighbour, for messages (over the user's history
-- and within a conversation) and memories, so it cannot turn the fused scores into NaN.
begin;
select plan(8);

select tests.create_cast('zeros');
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-3d', 3);
select tests.clear_authentication();

with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Zeros', p_window_turns => 1000, p_profile_id => tests.recall('p')::uuid, p_remember => true
)).id);
select tests.remember('knee', (memory.add_message(tests.recall('conv')::uuid, 'user', 'My knee aches after long runs')).id);
select tests.remember('zero', (memory.add_message(tests.recall('conv')::uuid, 'user', 'An empty thought')).id);
select tests.remember('pasta', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Pasta with pesto for dinner')).id);
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('runner', (select memory_id from memory.remember('Runs every morning', 'pattern')));
select tests.remember('blank', (select memory_id from memory.remember('Owns a blue bicycle', 'fact')));
select tests.clear_authentication();
insert into memory_private.message_embeddings (message_id, user_id, model, embedding) values
(tests.recall('knee')::bigint, tests.recall('owner')::uuid, 'test-3d', '[1, 0, 0]'),
(tests.recall('zero')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0, 0, 0]'),
(tests.recall('pasta')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0, 1, 0]');
insert into memory_private.memory_embeddings (memory_id, user_id, model, embedding) values
(tests.recall('runner')::uuid, tests.recall('owner')::uuid, 'test-3d', '[1, 0, 0]'),
(tests.recall('blank')::uuid, tests.recall('owner')::uuid, 'test-3d', '[0, 0, 0]');

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0]')$$,
    $$values (tests.recall('knee')::bigint), (tests.recall('pasta')::bigint)$$,
    'over the user''s history a message of zeros is nobody''s neighbour'
);
select results_eq(
    $$select message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0]', tests.recall('conv')::uuid)$$,
    $$values (tests.recall('knee')::bigint), (tests.recall('pasta')::bigint)$$,
    'within a conversation too'
);
select results_eq(
    $$select memory_id from memory_private.vector_memories(tests.recall('owner')::uuid, '[1, 0, 0]')$$,
    $$values (tests.recall('runner')::uuid)$$,
    'a memory of zeros is nobody''s neighbour'
);
select results_eq(
    $$select id from memory.search_messages('sore tendon', p_query_embedding => '[1, 0, 0]')$$,
    $$values (tests.recall('knee')::bigint), (tests.recall('pasta')::bigint)$$,
    'search ranks the other messages by meaning, nearest first'
);
select results_eq(
    $$select id from memory.search_messages('pesto', p_query_embedding => '[0.6, 0.8, 0]')$$,
    $$values (tests.recall('pasta')::bigint), (tests.recall('knee')::bigint)$$,
    'and fuses them with the words as before'
);
select throws_ok(
    $$select * from memory.search_messages('knee', p_query_embedding => '[0, 0, 0]')$$,
    '22023', 'the query embedding is all zeros: it has no direction',
    'search_messages refuses a query embedding of zeros'
);
select throws_ok(
    $$select * from memory.search_memories('runs', p_query_embedding => '[0, 0, 0]')$$,
    '22023', 'the query embedding is all zeros: it has no direction',
    'search_memories refuses it'
);
select throws_ok(
    $$select * from memory.select_memories(p_query => 'runs', p_query_embedding => '[0, 0, 0]')$$,
    '22023', 'the query embedding is all zeros: it has no direction',
    'select_memories refuses it'
);

select * from finish();
rollback;
