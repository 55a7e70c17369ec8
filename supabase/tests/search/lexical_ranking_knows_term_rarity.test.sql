-- Lexical ranking is BM25 (memory_private.lexical_messages / lexical_memories, used by
-- search_messages): a rare word outranks a common one, a shorter message outranks a longer one
-- with the same matches, repeating a word helps but saturates; a query is at most its first 32
-- distinct lexemes; each user's corpus size follows inserts and deletes; another user's rows never
-- appear, except to the admin of the user's tenant, who reads them (a participant in one of the
-- user's conversations searches only their own).
begin;
select plan(19);

select tests.create_cast('search-bm25');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Mixed', p_window_turns => 1000)).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_window_turns => 1000)).id);

-- Twenty messages about coffee, one about a zeppelin, one about both.
select memory.add_message(tests.recall('conv')::uuid, 'user', format('Morning coffee number %s', i)) from generate_series(1, 20) as i;
select tests.remember('zeppelin', (memory.add_message(tests.recall('conv')::uuid, 'user', 'The zeppelin museum was closed')).id);
select tests.remember('both', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Coffee at the zeppelin')).id);
-- Same word once, in a short and a long message; the word twice.
select tests.remember('short', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Kayak trip')).id);
select tests.remember('long', (memory.add_message(
    tests.recall('conv')::uuid, 'user', 'Kayak rental, paddles, helmets, maps, snacks, sunscreen, towels and dry bags')).id);
select tests.remember('twice', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Kayak, kayak, kayak')).id);
select memory.add_message(tests.recall('theirs')::uuid, 'user', 'Zeppelin zeppelin zeppelin kayak coffee');

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin') limit 2$$,
    $$values (tests.recall('both')::bigint), (tests.recall('zeppelin')::bigint)$$,
    'the message with both words first, then the one with the rare word, before any of the twenty with the common one'
);
select ok(
    (select score from memory_private.lexical_messages(tests.recall('owner')::uuid, 'zeppelin') limit 1)
    > (select max(score) from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee')),
    'a rare word weighs more than a common one'
);
select results_eq(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'kayak')$$,
    $$values (tests.recall('twice')::bigint), (tests.recall('short')::bigint), (tests.recall('long')::bigint)$$,
    'three times in a short message, then once in a short one, then once in a long one'
);
select ok(
    (select score from memory_private.lexical_messages(tests.recall('owner')::uuid, 'kayak') where message_id = tests.recall('twice')::bigint)
    < 3 * (select score from memory_private.lexical_messages(tests.recall('owner')::uuid, 'kayak') where message_id = tests.recall('short')::bigint),
    'repetition saturates: three times the word is worth less than three times once'
);
select results_eq(
    $$select id from memory.search_messages('zeppelin', p_limit => 5) order by id$$,
    $$values (tests.recall('zeppelin')::bigint), (tests.recall('both')::bigint)$$,
    'search_messages ranks the same way and returns only the owner''s messages'
);
select is_empty(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'the of and')$$,
    'a query of stop words has no terms and finds nothing'
);

-- Terms are bounded: the first 32 distinct lexemes, in the order they occur.
select is(
    cardinality(memory_private.query_terms((select string_agg(format('word%s', i), ' ') from generate_series(1, 20000) as i))),
    32, 'a query of 20,000 words is ranked by its first 32 terms'
);
select is(
    memory_private.query_terms('zebras eat apples and zebras sleep'),
    array['zebra', 'eat', 'appl', 'sleep'],
    'terms are stemmed, distinct, in order of first occurrence'
);

-- Other people never see the owner's messages, whoever they are.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.search_messages('zeppelin') where user_id = tests.recall('owner')::uuid$$,
    'a stranger''s search finds none of the owner''s messages'
);
select is_empty(
    $$select id from memory.search_messages('zeppelin', tests.recall('owner')::uuid) where user_id = tests.recall('owner')::uuid$$,
    'naming the owner does not make a stranger''s search reach the owner''s messages'
);
select is_empty(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'zeppelin')$$,
    'called directly, the ranking still shows a stranger nothing of the owner''s (row-level security)'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'zeppelin')$$,
    'another tenant''s admin sees nothing of the owner''s'
);
select is_empty(
    $$select id from memory.search_messages('zeppelin', tests.recall('owner')::uuid)$$,
    'nor finds any through search_messages'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select id from memory.search_messages('zeppelin', tests.recall('owner')::uuid, p_limit => 5) order by id$$,
    $$values (tests.recall('zeppelin')::bigint), (tests.recall('both')::bigint)$$,
    'the owner''s tenant admin, who reads the owner''s messages, searches them as the owner does'
);
-- A participant reads one of the owner's conversations, not the owner's history.
select tests.clear_authentication();
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.search_messages('zeppelin', tests.recall('owner')::uuid)$$,
    'a participant in one of the owner''s conversations does not search the owner''s messages'
);
select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory.search_messages('zeppelin')$$,
    '42501', null, 'anon cannot search'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select id from memory.search_messages('zeppelin', tests.recall('stranger')::uuid)$$,
    $$select id from memory.messages where conversation_id = tests.recall('theirs')::uuid and role = 'user'$$,
    'the service role searches for the user it names, and finds only that user''s messages'
);

-- The corpus size follows writes and deletes, through the fold.
select tests.clear_authentication();
select memory_private.fold_search_terms();
select tests.remember('documents', (select documents from memory_private.search_corpus where user_id = tests.recall('owner')::uuid));
select memory.add_turn(tests.recall('conv')::uuid, 'One more question', 'One more answer');
select memory_private.fold_search_terms();
select is(
    (select documents from memory_private.search_corpus where user_id = tests.recall('owner')::uuid),
    tests.recall('documents')::bigint + 2,
    'a folded turn adds two documents to the owner''s corpus'
);
delete from memory.messages where id = tests.recall('long')::bigint;
select memory_private.fold_search_terms();
select is(
    (select documents from memory_private.search_corpus where user_id = tests.recall('owner')::uuid),
    tests.recall('documents')::bigint + 1,
    'a deleted message leaves the corpus at the next fold'
);

select * from finish();
rollback;
