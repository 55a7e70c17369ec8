-- Lexical search scores a bounded set of messages (the lexical_candidates setting): the newest
-- holding the query's rarest terms, taken while their document frequencies sum to at most the
-- setting, and always the newest matches of the rarest term some message holds; a candidate is
-- scored on every query term. Here the messages are not folded (search_postings.test.sql ranks
-- the same searches from the postings).
begin;
select plan(8);

select tests.create_cast('search-bound');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Bound', p_window_turns => 1000)).id);
-- Twenty messages about coffee, one about a zeppelin, one about both.
select count(memory.add_message(tests.recall('conv')::uuid, 'user', format('Morning coffee number %s', i))) from generate_series(1, 20) as i;
select tests.remember('zeppelin', (memory.add_message(tests.recall('conv')::uuid, 'user', 'The zeppelin museum was closed')).id);
select tests.remember('both', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Coffee at the zeppelin')).id);
select tests.remember('harbour', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Zeppelins over the harbour')).id);
-- Newer than every zeppelin: the newest three matches of either word would be two of these.
select count(memory.add_message(tests.recall('conv')::uuid, 'user', format('Evening coffee number %s', i))) from generate_series(1, 2) as i;

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select count(*) from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin')),
    25::bigint, 'by default every message holding a query term is scored'
);

-- The owner's settings are the service role's to change; a test changes them directly.
select tests.clear_authentication();
update memory_private.settings set value = '3' where key = 'lexical_candidates';
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin') order by 1$$,
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid and search @@ to_tsquery('english', 'zeppelin') order by 1$$,
    'bounded to 3: only the messages holding the rarer term are scored'
);
select ok(
    (select score from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin')
    where message_id = tests.recall('both')::bigint)
    = (select max(score) from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin'))
    and (select score from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin')
    where message_id = tests.recall('both')::bigint)
    > (select score from memory_private.lexical_messages(tests.recall('owner')::uuid, 'zeppelin')
    where message_id = tests.recall('both')::bigint),
    'a candidate is scored on every query term, the common ones included, and so ranks first'
);
select results_eq(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee') order by 1$$,
    $$select n.id from (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and search @@ to_tsquery('english', 'coffee') order by id desc limit 3) as n order by 1$$,
    'a term more common than the bound still finds its newest matches, as many as the bound'
);
select results_eq(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee in Reykjavik')
    order by 1$$,
    $$select n.id from (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and search @@ to_tsquery('english', 'coffee') order by id desc limit 3) as n order by 1$$,
    'terms no message holds do not stand in for the rarest term: the common one still finds its newest'
);
select results_eq(
    $$select id from memory.search_messages('coffee', p_limit => 10) order by id$$,
    $$select n.id from (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and search @@ to_tsquery('english', 'coffee') order by id desc limit 3) as n order by 1$$,
    'search_messages ranks within the same bound'
);

-- Morning is in most messages but none of the newest.
select tests.clear_authentication();
select count(memory.add_message(tests.recall('conv')::uuid, 'user', format('Evening tea number %s', i))) from generate_series(1, 10) as i;
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'morning') order by 1$$,
    $$select n.id from (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and search @@ to_tsquery('english', 'morning') order by id desc limit 3) as n order by 1$$,
    'a common word used only long ago still finds its newest matches'
);

select tests.clear_authentication();
update memory_private.settings set value = '0' where key = 'lexical_candidates';
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select * from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee')$$,
    '22023', 'setting lexical_candidates must be a positive integer', 'a bound below one is refused by name'
);

select * from finish();
rollback;
