-- memory.search_conversations(query, user, archived, limit, offset, query embedding): seed 002's
-- conversation search. Conversations whose title holds the query come first, then those whose
-- turns search_messages finds, each by its best turn; archived ones only when asked (null: both),
-- never expired ones; a blank query or a bad page is 22023. Row-level security decides: the owner
-- finds their own, anon nothing, a stranger or another tenant's admin none of the owner's, the
-- owner's tenant admin the owner's as the owner does (titles and turns), the service role the
-- user it names.
begin;
select plan(13);

select tests.create_cast('rpc-search-conversations');
select tests.remember('trip', (memory.create_conversation(tests.recall('owner')::uuid, 'Lisbon trip')).id);
select tests.remember('shoes', (memory.create_conversation(tests.recall('owner')::uuid, 'Shoes')).id);
select tests.remember('bread', (memory.create_conversation(tests.recall('owner')::uuid, 'Baking')).id);
select tests.remember('archived', (memory.create_conversation(tests.recall('owner')::uuid, 'Old Lisbon notes')).id);
select tests.remember('expired', (memory.create_conversation(tests.recall('owner')::uuid, 'Lisbon, expired', p_ttl => '1 hour')).id);
select memory.add_turn(tests.recall('shoes')::uuid, 'Running shoes for Lisbon hills?', 'Trail shoes with grip.');
select memory.add_turn(tests.recall('bread')::uuid, 'How long does sourdough rise?', 'Overnight in the fridge.');
update memory.conversations set archived = true where id = tests.recall('archived')::uuid;
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('expired')::uuid;
select memory.create_conversation(tests.recall('stranger')::uuid, 'Lisbon for me');

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select title from memory.search_conversations('lisbon')$$,
    $$values ('Lisbon trip'), ('Shoes')$$,
    'a title holding the query first, then a conversation whose turn matches; never the expired one'
);
select results_eq(
    $$select title from memory.search_conversations('  SOURDOUGH ')$$,
    $$values ('Baking')$$,
    'found by its turns alone, the query trimmed and matched without case'
);
select results_eq(
    $$select title from memory.search_conversations('lisbon', p_archived => true)$$,
    $$values ('Old Lisbon notes')$$,
    'archived ones when asked'
);
select results_eq(
    $$select count(*)::integer from memory.search_conversations('lisbon', p_archived => null)$$,
    array[3],
    'both with a null filter'
);
select results_eq(
    $$select title from memory.search_conversations('lisbon', p_limit => 1, p_offset => 1)$$,
    $$values ('Shoes')$$,
    'paged'
);
select throws_ok(
    $$select * from memory.search_conversations('   ')$$,
    '22023', 'query must be 1..1000 characters', 'a blank query is refused'
);
select throws_ok(
    $$select * from memory.search_conversations('lisbon', p_limit => 201)$$,
    '22023', 'limit must be 1..200 and offset 0..1000', 'a bad page is refused'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select results_eq(
    $$select title from memory.search_conversations('lisbon')$$,
    $$values ('Lisbon for me')$$,
    'a stranger finds only their own'
);
select is_empty(
    $$select id from memory.search_conversations('lisbon', tests.recall('owner')::uuid)$$,
    'a stranger naming the owner finds nothing of the owner''s'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.search_conversations('lisbon', tests.recall('owner')::uuid)$$,
    'another tenant''s admin finds nothing of the owner''s'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select title from memory.search_conversations('lisbon', tests.recall('owner')::uuid)$$,
    $$values ('Lisbon trip'), ('Shoes')$$,
    'the owner''s tenant admin finds the owner''s conversations by title and by turn'
);
select tests.authenticate_as_anon();
select throws_ok($$select * from memory.search_conversations('lisbon')$$, '42501', null, 'anon cannot search');
select tests.authenticate_as_service_role();
select results_eq(
    $$select title from memory.search_conversations('sourdough', tests.recall('owner')::uuid)$$,
    $$values ('Baking')$$,
    'the service role searches the conversations of the user it names'
);

select * from finish();
rollback;
