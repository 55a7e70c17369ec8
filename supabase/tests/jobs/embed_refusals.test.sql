-- A text the embeddings server refuses keeps the refusal instead of a vector: the embed job stores
-- the other rows of its batch, the refused row is not sent again (no note, not among the rows
-- without one), search finds it by its words alone, and an edit tries it again; a new model tries
-- every row again, and so does memory.retry_refused_embeddings (the service role's). A row holds a
-- vector or a refusal, never both or neither. Texts are sent cut at embedding_max_chars; the
-- version stays the whole text's.
begin;
select plan(28);

select tests.create_cast('embed-refusals');
update memory_private.settings set value = '10' where key = 'embedding_batch';
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-2d', 2);
select tests.clear_authentication();
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Refusals')).id);
select tests.remember('ok', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Pasta with pesto')).id);
select tests.remember('long', (memory.add_message(tests.recall('conv')::uuid, 'assistant', repeat('long words ', 50))).id);
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('memory', (select memory_id from memory.remember('Runs every morning', 'pattern')));

select tests.authenticate_as_service_role();
select memory.queue_embeddings();
select tests.remember('job', (
    select id from memory.claim_jobs(array['embed'], 'w1', 1, p_user_ids => array[tests.recall('owner')::uuid])
));

-- Texts are cut; versions are the whole texts'.
update memory_private.settings set value = '100' where key = 'embedding_max_chars';
select tests.remember('input', memory.embedding_input(tests.recall('job')::bigint, 'w1'));
select is(
    (select max(length(i ->> 'text')) from jsonb_array_elements(tests.recall('input')::jsonb -> 'items') as i),
    100, 'texts are sent cut at embedding_max_chars'
);
select is(
    (select i ->> 'version' from jsonb_array_elements(tests.recall('input')::jsonb -> 'items') as i
        where i ->> 'id' = tests.recall('long')),
    (select t.version from memory_private.embedding_texts(tests.recall('owner')::uuid, array[tests.recall('long')::bigint]) as t),
    'a cut text''s version is the whole text''s'
);
update memory_private.settings set value = '0' where key = 'embedding_max_chars';
select throws_ok(
    format($$select memory.embedding_input(%s, 'w1')$$, tests.recall('job')),
    '22023', 'setting embedding_max_chars must be a number of at least 1', 'a setting below one character is refused'
);
update memory_private.settings set value = '8000' where key = 'embedding_max_chars';

-- Malformed refusals refuse the batch.
select throws_ok(
    format(
        $$select memory.finish_embeddings(%s, 'w1', 'test-2d',
            '[{"kind": "message", "id": "%s", "embedding": [1, 0], "refused": "HTTP 400"}]')$$,
        tests.recall('job'), tests.recall('ok')
    ),
    '22023', 'each item needs kind (message or memory), id, and an embedding of 2 numbers or refused (why)',
    'an item with a vector and a refusal refuses the batch'
);
select throws_ok(
    format(
        $$select memory.finish_embeddings(%s, 'w1', 'test-2d', '[{"kind": "message", "id": "%s", "refused": " \n "}]')$$,
        tests.recall('job'), tests.recall('ok')
    ),
    '22023', null, 'a refusal that says nothing refuses the batch'
);
select throws_ok(
    format(
        $$select memory.finish_embeddings(%s, 'w1', 'test-2d', '[{"kind": "message", "id": "%s", "refused": 400}]')$$,
        tests.recall('job'), tests.recall('ok')
    ),
    '22023', null, 'a refusal that is not a text refuses the batch'
);

-- A batch with refusals: the vector and the refusals are stored, and nothing remains.
select is(
    memory.finish_embeddings(tests.recall('job')::bigint, 'w1', 'test-2d', jsonb_build_array(
        jsonb_build_object('kind', 'message', 'id', tests.recall('ok'), 'embedding', array[1, 0]),
        jsonb_build_object('kind', 'message', 'id', tests.recall('long'), 'refused', e' HTTP 400:\n  maximum   context '),
        jsonb_build_object('kind', 'memory', 'id', tests.recall('memory'), 'refused', repeat('x', 600))
    )),
    '{"stored": 1, "refused": 2, "current_model": true}'::jsonb,
    'the finish counts the vector and the refusals'
);
select is(
    (select (embedding is null, refused, model) from memory_private.message_embeddings
        where message_id = tests.recall('long')::bigint),
    (true, 'HTTP 400: maximum context'::text, 'test-2d'::text),
    'the refused message keeps the refusal, on one line, under the model, without a vector'
);
select is(
    (select (embedding is null, length(refused)) from memory_private.memory_embeddings
        where memory_id = tests.recall('memory')::uuid),
    (true, 500), 'a long refusal is kept to 500 characters'
);
select is(
    (select (status, result ->> 'refused') from memory_private.jobs where id = tests.recall('job')::bigint),
    ('done'::text, '2'::text), 'no row waits: the job is done, its result counting the refusals'
);
select is_empty(
    format('select 1 from memory_private.pending_embeddings where message_id = %s', tests.recall('long')),
    'the refused message''s note is taken'
);
select is_empty(
    format('select 1 from memory_private.unembedded(%L, 10)', tests.recall('owner')),
    'refused rows are not sent again'
);

-- Search compares vectors only; the refused message is found by its words.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0]')$$,
    $$values (tests.recall('ok')::bigint)$$,
    'over the user''s history a refused message is nobody''s neighbour'
);
select results_eq(
    $$select message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0]', tests.recall('conv')::uuid)$$,
    $$values (tests.recall('ok')::bigint)$$,
    'within a conversation too'
);
select is_empty(
    $$select 1 from memory_private.vector_memories(tests.recall('owner')::uuid, '[1, 0]')$$,
    'a refused memory is nobody''s neighbour'
);
select ok(
    tests.recall('long')::bigint in (
        select id from memory.search_messages('long words', p_query_embedding => '[1, 0]')
    ),
    'search finds the refused message by its words'
);
select tests.clear_authentication();

-- A row holds a vector or a refusal.
select throws_ok(
    format(
        $$insert into memory_private.message_embeddings (message_id, user_id, model) values (%s, %L, 'test-2d')$$,
        tests.recall('ok'), tests.recall('owner')
    ),
    '23514', null, 'a row with neither a vector nor a refusal is refused'
);
select throws_ok(
    format(
        $$update memory_private.memory_embeddings set embedding = '[1, 0]' where memory_id = %L$$, tests.recall('memory')
    ),
    '23514', null, 'a row with both is refused'
);

-- An edit tries the message again; a new model tries every row again.
update memory.messages set content = 'Short now' where id = tests.recall('long')::bigint;
select is(
    (select count(*)::integer from memory_private.message_embeddings where message_id = tests.recall('long')::bigint)
    + (select count(*)::integer from memory_private.pending_embeddings where message_id = tests.recall('long')::bigint) * 10,
    10, 'an edited message loses its refusal and waits for a vector again'
);
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-2d-v2', 2);
select ok(
    tests.recall('memory') in (select id from memory_private.unembedded(tests.recall('owner')::uuid, 10)),
    'a refusal under another model does not keep a memory from the new one'
);

-- Once the cause is fixed, the refused rows are tried again: one user's, or everyone's.
select memory.set_embedding_model('test-2d', 2);
select ok(
    tests.recall('memory') not in (select id from memory_private.unembedded(tests.recall('owner')::uuid, 10)),
    'under the model that refused it, the memory does not wait'
);
select is(memory.retry_refused_embeddings(tests.recall('stranger')::uuid), 0, 'another user''s retry touches nothing');
select is(memory.retry_refused_embeddings(tests.recall('owner')::uuid), 1, 'the retry counts the rows whose refusal goes');
select ok(
    tests.recall('memory') in (select id from memory_private.unembedded(tests.recall('owner')::uuid, 10))
    and exists (
        select 1 from memory_private.jobs
        where user_id = tests.recall('owner')::uuid and kind = 'embed' and status = 'queued'
    ),
    'the memory waits for a vector again, its user''s embed job queued'
);

-- The helper that folds a refusal is the embed job's, not a signed-in user's.
select is(memory_private.refusal(e'a \t\n b  '), 'a b', 'service_role folds a refusal''s whitespace');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select memory_private.refusal('x')$$, '42501', null, 'a signed-in user cannot call the helper');
select throws_ok(
    $$select memory.retry_refused_embeddings(auth.uid())$$, '42501', null, 'nor retry refused rows, even their own'
);
select tests.authenticate_as_anon();
select throws_ok($$select memory_private.refusal('x')$$, '42501', null, 'nor can anon');
select tests.clear_authentication();

select * from finish();
rollback;
