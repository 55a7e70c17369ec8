-- Term statistics for BM25 (memory_private.search_terms, search_corpus): folding counts each
-- lexeme once per message of its user; messages not folded yet are counted at query time, so the
-- ranking is the same before and after a fold. Deleting a counted message writes no statistic: it
-- is noted in search_unfolds, left out at query time, and taken out by the next fold. Users read
-- only their own statistics; only service_role folds or writes them; anon reaches nothing.
begin;
select plan(20);

select tests.create_cast('search-terms');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Terms', p_window_turns => 1000)).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_window_turns => 1000)).id);
select memory.add_message(tests.recall('conv')::uuid, 'user', format('Morning coffee number %s', i)) from generate_series(1, 20) as i;
select tests.remember('zeppelin', (memory.add_message(tests.recall('conv')::uuid, 'user', 'The zeppelin museum was closed')).id);
select tests.remember('both', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Coffee at the zeppelin, coffee again')).id);
select memory.add_message(tests.recall('theirs')::uuid, 'user', 'Zeppelin coffee');

select tests.authenticate_as(tests.recall('owner')::uuid);
create temporary table before_fold as
select * from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin museum');
select tests.clear_authentication();

select tests.authenticate_as_service_role();
select ok(memory_private.fold_search_terms() >= 23, 'a fold counts every message not counted yet');
select tests.clear_authentication();
select results_eq(
    format($$select lexeme, documents from memory_private.search_terms where user_id = %L
        and lexeme in ('coffe', 'zeppelin', 'museum') order by lexeme$$, tests.recall('owner')),
    $$values ('coffe'::text, 21), ('museum', 1), ('zeppelin', 2)$$,
    'each lexeme is counted once per message that holds it, per user'
);
select is(
    (select documents from memory_private.search_terms where user_id = tests.recall('stranger')::uuid and lexeme = 'zeppelin'),
    1, 'another user''s messages count for that user only'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select * from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin museum')$$,
    $$select * from before_fold$$,
    'the ranking is the same whether the messages were folded or counted at query time'
);
select is(
    (select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin museum') limit 1),
    tests.recall('zeppelin')::bigint,
    'the message with the rarest word comes first'
);

select tests.clear_authentication();
delete from memory.messages where id = tests.recall('both')::bigint;
select results_eq(
    format($$select (select documents from memory_private.search_terms where user_id = %1$L and lexeme = 'zeppelin'),
        (select count(*)::integer from memory_private.search_unfolds where user_id = %1$L)$$, tests.recall('owner')),
    $$values (2, 1)$$,
    'a deleted message that was counted is noted for the next fold; no statistic is written yet'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
create temporary table before_unfold as
select * from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin museum');
select ok(
    not exists (select 1 from before_unfold where message_id = tests.recall('both')::bigint),
    'search leaves the deleted message out at once'
);
select tests.authenticate_as_service_role();
select memory_private.fold_search_terms();
select tests.clear_authentication();
select results_eq(
    format($$select (select documents from memory_private.search_terms where user_id = %1$L and lexeme = 'zeppelin'),
        (select documents::integer from memory_private.search_corpus where user_id = %1$L),
        (select count(*)::integer from memory_private.search_unfolds)$$, tests.recall('owner')),
    $$values (1, 21, 0)$$,
    'the next fold takes the deleted message out of the term and corpus counts'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select * from memory_private.lexical_messages(tests.recall('owner')::uuid, 'coffee zeppelin museum')$$,
    $$select * from before_unfold$$,
    'the ranking is the same before and after the fold takes a deleted message out'
);

-- Pending deletions of both users, not folded yet.
select tests.clear_authentication();
delete from memory.messages where id = tests.recall('zeppelin')::bigint;
delete from memory.messages where conversation_id = tests.recall('theirs')::uuid;
select tests.authenticate_as_anon();
select throws_ok('select * from memory_private.search_unfolds', '42501', null, 'anon cannot read pending deletions');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    'select user_id from memory_private.search_unfolds',
    format('values (%L::uuid)', tests.recall('owner')),
    'the owner reads their own pending deletions only'
);
select throws_ok(
    $$delete from memory_private.search_unfolds$$, '42501', null, 'a signed-in user cannot change pending deletions'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is_empty('select 1 from memory_private.search_unfolds', 'a tenant admin reads no user''s pending deletions');
select tests.authenticate_as_service_role();
select is(
    (select count(*)::integer from memory_private.search_unfolds), 2, 'service_role reads every pending deletion'
);

select tests.authenticate_as_anon();
select throws_ok('select * from memory_private.search_terms', '42501', null, 'anon cannot read term statistics');
select tests.authenticate_as(tests.recall('owner')::uuid);
select ok(
    (select count(*) from memory_private.search_terms) > 0
    and not exists (select 1 from memory_private.search_terms where user_id <> tests.recall('owner')::uuid),
    'the owner reads their own statistics only'
);
select throws_ok(
    $$update memory_private.search_terms set documents = 0$$, '42501', null, 'a signed-in user cannot change them'
);
select throws_ok(
    $$select memory_private.fold_search_terms()$$, '42501', null, 'a signed-in user cannot fold'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is_empty('select 1 from memory_private.search_terms', 'a tenant admin reads no user''s statistics');
select tests.authenticate_as_service_role();
select ok(
    exists (select 1 from memory_private.search_terms where user_id = tests.recall('stranger')::uuid),
    'service_role reads them'
);

select * from finish();
rollback;
