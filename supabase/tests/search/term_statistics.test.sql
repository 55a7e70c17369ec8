-- Term statistics for BM25 (memory_private.search_terms): folding counts each lexeme once per
-- message of its user; messages not folded yet are counted at query time, so the ranking is the
-- same before and after a fold; deleting a counted message takes it out. Users read only their
-- own statistics; only service_role folds or writes them; anon reaches nothing.
begin;
select plan(12);

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
select is(
    (select documents from memory_private.search_terms where user_id = tests.recall('owner')::uuid and lexeme = 'zeppelin'),
    1, 'a deleted message leaves the counts'
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
