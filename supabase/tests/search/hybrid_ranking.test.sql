-- Hybrid retrieval: search_messages, search_memories and select_memories fuse the lexical ranking
-- with the vector ranking of the current embedding model. A semantic neighbour that shares no word
-- with the query is found by the vector side; a row both sides find comes first; the fusion weighs
-- scores, not ranks, so a wide lead on one side beats a narrow one on the other; rows without a
-- vector are still found lexically; vectors of another model, or another user's, never count; a
-- query embedding of the wrong dimensions is refused (22023). Vectors are written by hand here,
-- three-dimensional, under a test model.
begin;
select plan(18);

select tests.create_cast('search-hybrid');
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-3d', 3);
select tests.clear_authentication();

with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Mixed', p_window_turns => 1000, p_profile_id => tests.recall('p')::uuid, p_remember => true
)).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_window_turns => 1000)).id);
select tests.remember('knee', (memory.add_message(tests.recall('conv')::uuid, 'user', 'My knee aches after long runs')).id);
select tests.remember('pasta', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Pasta with pesto for dinner')).id);
select tests.remember('injury', (memory.add_message(tests.recall('conv')::uuid, 'user', 'A running injury again')).id);
select tests.remember('plain', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Injury report filed')).id);
select tests.remember('foreign', (memory.add_message(tests.recall('theirs')::uuid, 'user', 'Their sore knee')).id);
-- The vector side scales similarity between its nearest and its farthest, so the farthest adds
-- nothing: a far vector keeps 'injury' from being the owner's farthest.
select tests.remember('flight', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Booked a flight to Rome')).id);

insert into memory_private.message_embeddings (message_id, user_id, model, embedding) values
(tests.recall('knee')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0.9, 0.1, 0]'),
(tests.recall('pasta')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0, 0, 1]'),
(tests.recall('injury')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0.8, 0.2, 0]'),
(tests.recall('foreign')::bigint, tests.recall('stranger')::uuid, 'test-3d', '[1, 0, 0]'),
(tests.recall('flight')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0, 1, 0]');
-- 'plain' has no vector yet; 'pasta' has an old model's vector that points at the query.
update memory_private.message_embeddings set model = 'old-model', embedding = '[1, 0, 0]'
where message_id = tests.recall('pasta')::bigint;

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.search_messages('sore tendon', p_query_embedding => '[1, 0, 0]')$$,
    $$values (tests.recall('knee')::bigint), (tests.recall('injury')::bigint), (tests.recall('flight')::bigint)$$,
    'no shared word: the vector side finds the neighbours, nearest first; the old model''s vector and the other user''s do not count'
);
select is(
    (select id from memory.search_messages('injury', p_query_embedding => '[1, 0, 0]') limit 1),
    tests.recall('injury')::bigint,
    'a message both rankings find comes first'
);
select ok(
    tests.recall('plain')::bigint in (select id from memory.search_messages('injury', p_query_embedding => '[1, 0, 0]')),
    'a message without a vector is still found lexically'
);
select results_eq(
    $$select id from memory.search_messages('injury') order by id$$,
    $$values (tests.recall('injury')::bigint), (tests.recall('plain')::bigint)$$,
    'without a query embedding the search is lexical'
);
select results_eq(
    $$select id from memory.search_messages('sore', p_conversation_id => tests.recall('conv')::uuid, p_query_embedding => '[1, 0, 0]')$$,
    $$values (tests.recall('knee')::bigint), (tests.recall('injury')::bigint), (tests.recall('flight')::bigint)$$,
    'within one conversation the vector side is exact over its messages'
);
-- Lexically 'lead' is ahead of 'close' by a little (a shorter turn with the same word), on meaning
-- 'close' is ahead by far: fused by rank the two tie, fused by score 'close' comes first.
select tests.remember('margins', (memory.create_conversation(tests.recall('owner')::uuid, 'Margins', p_window_turns => 1000)).id);
select tests.remember('lead', (memory.add_message(tests.recall('margins')::uuid, 'user', 'Tendonitis')).id);
select tests.remember('close', (memory.add_message(tests.recall('margins')::uuid, 'user', 'Tendonitis flared')).id);
select tests.remember('far', (memory.add_message(tests.recall('margins')::uuid, 'user', 'Tendonitis after many long hill runs')).id);
select tests.clear_authentication();
insert into memory_private.message_embeddings (message_id, user_id, model, embedding) values
(tests.recall('lead')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0.1, 1, 0]'),
(tests.recall('close')::bigint, tests.recall('owner')::uuid, 'test-3d', '[1, 0, 0]'),
(tests.recall('far')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0, 1, 0]');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.search_messages('tendonitis', p_conversation_id => tests.recall('margins')::uuid, p_query_embedding => '[1, 0, 0]')$$,
    $$values (tests.recall('close')::bigint), (tests.recall('lead')::bigint), (tests.recall('far')::bigint)$$,
    'a wide lead on meaning outweighs a narrow lead on the words'
);
select throws_ok(
    $$select * from memory.search_messages('knee', p_query_embedding => '[1, 0]')$$,
    '22023', 'the query embedding has 2 dimensions; the embedding model test-3d has 3',
    'a query embedding of other dimensions is refused'
);
select is_empty(
    $$select * from memory_private.vector_messages(tests.recall('stranger')::uuid, '[1, 0, 0]')$$,
    'asking the vector side for another user''s rows returns nothing (RLS on the vectors)'
);

-- Memories: the same fusion, and select_memories lifts the nearest by their similarity.
select tests.remember('runner', (select memory_id from memory.remember('Trains for a marathon', 'goal')));
select tests.remember('cook', (select memory_id from memory.remember('Cooks Italian food', 'preference')));
select tests.remember('pesto', (
    select memory_id from memory.remember('Loves pesto dishes', 'preference', p_source_message_id => tests.recall('pasta')::bigint)
));
select tests.clear_authentication();
insert into memory_private.memory_embeddings (memory_id, user_id, model, embedding) values
(tests.recall('runner')::uuid, tests.recall('owner')::uuid, 'test-3d', '[1, 0, 0]'),
(tests.recall('cook')::uuid, tests.recall('owner')::uuid, 'test-3d', '[0, 1, 0]'),
(tests.recall('pesto')::uuid, tests.recall('owner')::uuid, 'test-3d', '[0, 0.2, 1]');
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select id from memory.search_messages('loves') limit 1),
    tests.recall('pasta')::bigint,
    'a message is found through the words of a memory drawn from it'
);
select ok(
    tests.recall('pasta')::bigint not in (select id from memory.search_messages('cuisine', p_query_embedding => '[0, 0, 1]')),
    'but not through the memory''s vector: the message''s own is of an old model, so only its words find it'
);
select results_eq(
    $$select id from memory.search_memories('tendon pain', p_query_embedding => '[1, 0.1, 0]') limit 1$$,
    $$values (tests.recall('runner')::uuid)$$,
    'search_memories finds the semantic neighbour first'
);
select ok(
    tests.recall('cook')::uuid not in (
        select id from memory.search_memories('tendon pain', p_query_embedding => '[1, 0.1, 0]')
    ),
    'a memory whose meaning is not similar enough (memory_search_min_similarity) is not a match'
);
select is_empty(
    $$select id from memory.search_memories('tendon pain')$$,
    'without an embedding, a query with no shared word or near spelling finds no memory'
);
select is(
    (select id from memory.select_memories(p_query => 'tendon pain', p_query_embedding => '[1, 0.1, 0]', p_limit => 1)),
    tests.recall('runner')::uuid,
    'select_memories lifts the memory nearest the query''s meaning to the top'
);
select is(
    (select id from memory.select_memories(p_query => 'tendon pain', p_query_embedding => '[0, 1, 0]', p_limit => 1)),
    tests.recall('cook')::uuid,
    'and another query embedding lifts another memory'
);
select ok(
    (memory.prompt_context(tests.recall('conv')::uuid, 'tendon pain', p_query_embedding => '[1, 0.1, 0]')::jsonb -> 'memories' -> 0 ->> 'id')
    = tests.recall('runner'),
    'prompt_context passes the query embedding to the selection'
);
select throws_ok(
    $$select * from memory.select_memories(p_query => 'x', p_query_embedding => '[1, 0, 0, 0]')$$,
    '22023', null, 'select_memories refuses a query embedding of other dimensions'
);

-- Memories fuse by score too: 'tendonitis flared' is lexically a little behind and on meaning far
-- ahead of 'tendonitis' (fused by rank, 'tendonitis' would lead by a hair).
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('m_lead', (select memory_id from memory.remember('Tendonitis', 'fact')));
select tests.remember('m_close', (select memory_id from memory.remember('Tendonitis flared', 'fact')));
select tests.remember('m_far', (select memory_id from memory.remember('Tendonitis after many long hill runs', 'fact')));
select tests.clear_authentication();
insert into memory_private.memory_embeddings (memory_id, user_id, model, embedding) values
(tests.recall('m_lead')::uuid, tests.recall('owner')::uuid, 'test-3d', '[0.1, 1, 0]'),
(tests.recall('m_close')::uuid, tests.recall('owner')::uuid, 'test-3d', '[1, 0.05, 0]'),
(tests.recall('m_far')::uuid, tests.recall('owner')::uuid, 'test-3d', '[0, 1, 0]');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select s.id from memory.search_memories('tendonitis', p_query_embedding => '[1, 0, 0]') with ordinality as s
    where s.id in (tests.recall('m_lead')::uuid, tests.recall('m_close')::uuid, tests.recall('m_far')::uuid)
    order by s.ordinality$$,
    $$values (tests.recall('m_close')::uuid), (tests.recall('m_lead')::uuid), (tests.recall('m_far')::uuid)$$,
    'search_memories: a wide lead on meaning outweighs a narrow lead on the words'
);

select * from finish();
rollback;
