-- Search by meaning over a user's whole history (memory_private.vector_messages) chooses between
-- the model's HNSW index and an exact scan by what each would read (hnsw_visit_cost). Either way
-- it returns the user's nearest, never another user's; when the filtered index scan gives up
-- before it has the rows asked for (other users' vectors nearer the query, the scan's budget
-- spent), the exact scan answers instead of a short list. Three-dimensional vectors under a test
-- model; the index path is taken by setting hnsw_visit_cost to 0 and sorts off for the test.
begin;
select plan(6);

select tests.create_cast('vector-scan');
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-3d', 3);
select tests.clear_authentication();

select tests.remember('mine', (memory.create_conversation(tests.recall('owner')::uuid, 'Mine', p_window_turns => 1000)).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_window_turns => 1000)).id);
-- The owner's four vectors point away from the query; the stranger's 2,000 point at it.
insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
select (memory.add_message(tests.recall('mine')::uuid, 'user', 'mine ' || i)).id, tests.recall('owner')::uuid, 'test-3d',
    format('[0, %s, 1]', i)::extensions.vector
from generate_series(1, 4) as i;
insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
select (memory.add_message(tests.recall('theirs')::uuid, 'user', 'theirs ' || i)).id, tests.recall('stranger')::uuid,
    'test-3d', format('[1, %s, 0]', i / 10000.0)::extensions.vector
from generate_series(1, 2000) as i;
select memory_private.fold_search_terms(2147483647);
select tests.remember('nearest', array(
    select m.id from memory.messages as m where m.conversation_id = tests.recall('mine')::uuid order by m.id limit 2
)::text);

select tests.authenticate_as_service_role();
select is(
    array(select v.message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]', null, 2) as v),
    tests.recall('nearest')::bigint[],
    'a small history beside everyone''s is scanned exactly: the user''s nearest two'
);

update memory_private.settings set value = '0' where key = 'hnsw_visit_cost';
set local enable_sort = off;
select is(
    array(select v.message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]', null, 2) as v),
    tests.recall('nearest')::bigint[],
    'through the index: the user''s nearest two, never the stranger''s nearer vectors'
);
-- The index scan may visit one row: it gives up with none of the owner's.
set local hnsw.ef_search = 1;
set local hnsw.max_scan_tuples = 1;
select is(
    array(select v.message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]', null, 2) as v),
    tests.recall('nearest')::bigint[],
    'an index scan that gives up short is answered by the exact scan: still the nearest two'
);
reset hnsw.ef_search;
reset hnsw.max_scan_tuples;
reset enable_sort;

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select * from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]')$$,
    'a stranger asking for the owner''s nearest gets nothing (RLS on the vectors)'
);

select tests.clear_authentication();
update memory_private.settings set value = '-1' where key = 'hnsw_visit_cost';
select tests.authenticate_as_service_role();
select throws_ok(
    $$select * from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]')$$,
    '22023', 'setting hnsw_visit_cost must be a number of at least 0',
    'a negative hnsw_visit_cost is refused'
);
select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]')$$,
    '42501', null, 'anon may not call it'
);

select * from finish();
rollback;
