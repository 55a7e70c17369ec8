-- memory_private.message_embeddings / memory_embeddings: a user reads the vectors of their own rows
-- (what search compares), nobody else's: not a stranger, not a tenant admin (search of another
-- user's rows is lexical), not anon; no signed-in user writes a vector; service_role (the embed
-- job) reads and writes them. The embed job's RPCs and the model setting are service_role's only.
-- The same for a user's vector lists (their centres and the listed copies of their vectors).
begin;
select plan(32);

select tests.create_cast('rls-embeddings');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Vectors')).id);
select tests.remember('message', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Owner words')).id);
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
select tests.remember('memory', (select memory_id from memory.remember('Owner fact', 'fact', tests.recall('owner')::uuid)));
insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
values (tests.recall('message')::bigint, tests.recall('owner')::uuid, 'offline-hash-384', array_fill(0.1, array[384])::extensions.vector);
insert into memory_private.memory_embeddings (memory_id, user_id, model, embedding)
values (tests.recall('memory')::uuid, tests.recall('owner')::uuid, 'offline-hash-384', array_fill(0.1, array[384])::extensions.vector);
insert into memory_private.vector_lists (user_id, model, centroids, lists, messages, built_at)
values (
    tests.recall('owner')::uuid, 'offline-hash-384', array[array_fill(0.1, array[384])::extensions.halfvec], 1, 1, now()
);
insert into memory_private.vector_list_entries (message_id, user_id, model, list_no, embedding)
values (tests.recall('message')::bigint, tests.recall('owner')::uuid, 'offline-hash-384', 1, array_fill(0.1, array[384])::extensions.halfvec);

select tests.authenticate_as_anon();
select throws_ok('select * from memory_private.message_embeddings', '42501', null, 'anon cannot read message vectors');
select throws_ok('select * from memory_private.memory_embeddings', '42501', null, 'anon cannot read memory vectors');
select throws_ok('select * from memory_private.vector_lists', '42501', null, 'anon cannot read vector lists');
select throws_ok('select * from memory_private.vector_list_entries', '42501', null, 'anon cannot read listed vectors');

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    'select message_id from memory_private.message_embeddings', array[tests.recall('message')::bigint],
    'the owner reads the vectors of their messages'
);
select results_eq(
    'select memory_id from memory_private.memory_embeddings', array[tests.recall('memory')::uuid],
    'the owner reads the vectors of their memories'
);
select throws_ok(
    format($$insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
        values (%s, %L, 'x', '[1]')$$, tests.recall('message'), tests.recall('owner')),
    '42501', null, 'the owner cannot write a vector'
);
select throws_ok(
    $$update memory_private.memory_embeddings set embedding = '[1]'$$, '42501', null, 'the owner cannot change a vector'
);
select throws_ok(
    $$delete from memory_private.message_embeddings$$, '42501', null, 'the owner cannot delete a vector'
);
select results_eq(
    'select lists from memory_private.vector_lists', array[1], 'the owner reads their vector lists'
);
select results_eq(
    'select message_id from memory_private.vector_list_entries', array[tests.recall('message')::bigint],
    'the owner reads their listed vectors'
);
select throws_ok(
    $$update memory_private.vector_list_entries set list_no = 2$$, '42501', null, 'the owner cannot move a listed vector'
);
select throws_ok(
    format($$insert into memory_private.vector_lists (user_id, model, wanted_at) values (%L, 'x', now())$$,
        tests.recall('owner')),
    '42501', null, 'the owner cannot mark lists due'
);
select throws_ok(
    $$delete from memory_private.vector_lists$$, '42501', null, 'the owner cannot delete their lists'
);
select throws_ok(
    format($$select memory_private.build_vector_lists(%L, 'offline-hash-384')$$, tests.recall('owner')),
    '42501', null, 'a signed-in user cannot build lists'
);
select throws_ok(
    $$select memory.set_embedding_model('mine', 3)$$, '42501', null, 'a signed-in user cannot change the model'
);
select throws_ok(
    $$select memory.finish_embeddings(1, 'w', 'm', '[]')$$, '42501', null, 'a signed-in user cannot finish an embed job'
);
select throws_ok(
    $$select memory.embedding_input(1, 'w')$$, '42501', null, 'a signed-in user cannot read an embed job''s input'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty('select 1 from memory_private.message_embeddings', 'a stranger reads no message vectors');
select is_empty('select 1 from memory_private.memory_embeddings', 'a stranger reads no memory vectors');
select is_empty('select 1 from memory_private.vector_list_entries', 'a stranger reads no listed vectors');
select is_empty('select 1 from memory_private.vector_lists', 'a stranger reads no vector lists');

select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is_empty('select 1 from memory_private.message_embeddings', 'the owner''s tenant admin reads no vectors');
select is_empty('select 1 from memory_private.vector_lists', 'the owner''s tenant admin reads no vector lists');
select is_empty('select 1 from memory_private.vector_list_entries', 'the owner''s tenant admin reads no listed vectors');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty('select 1 from memory_private.memory_embeddings', 'another tenant''s admin reads no vectors');

select tests.authenticate_as_service_role();
select results_eq(
    format('select count(*)::integer from memory_private.message_embeddings where user_id = %L', tests.recall('owner')),
    array[1], 'service_role reads the vectors'
);
select lives_ok(
    format($$update memory_private.message_embeddings set embedding = array_fill(0.2, array[384])::extensions.vector
        where message_id = %s$$, tests.recall('message')),
    'service_role writes them'
);
select lives_ok(
    $$select memory.set_embedding_model('offline-hash-384', 384)$$, 'service_role sets the model'
);
select results_eq(
    format('select count(*)::integer from memory_private.vector_list_entries where user_id = %L', tests.recall('owner')),
    array[1], 'service_role reads the listed vectors'
);
select lives_ok(
    format($$update memory_private.vector_lists set wanted_at = now() where user_id = %L$$, tests.recall('owner')),
    'service_role marks lists due'
);
select is(
    memory_private.build_vector_lists(tests.recall('owner')::uuid, 'offline-hash-384'), 0,
    'service_role builds lists (none for one message)'
);

select * from finish();
rollback;
