-- Embed jobs: the users of new messages are queued by a scan of the messages' notes
-- (memory.queue_embeddings: pg_cron and the workers), an edited message or a memory by trigger,
-- one embed job per user; the job's input
-- is the user's rows without a vector of the current model, newest first, a batch at a time; its
-- result is refused whole when a vector has other dimensions (22023, nothing written); a result
-- of a model that is no longer current stores nothing; the job queues itself again while rows
-- remain, including rows written while it ran; changing the model builds its index and re-embeds.
begin;
select plan(26);

update memory_private.settings set value = '2' where key = 'embedding_batch';
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-2d', 2);
select memory.queue_embeddings();
select tests.clear_authentication();
select tests.remember('u', memory.user_id_for('embed-jobs.u'));
select tests.remember('conv', (memory.create_conversation(tests.recall('u')::uuid, 'Embeds')).id);

select tests.remember('m1', (memory.add_message(tests.recall('conv')::uuid, 'user', 'first words')).id);
select tests.remember('m2', (memory.add_message(tests.recall('conv')::uuid, 'assistant', 'second words')).id);
select tests.remember('m3', (memory.add_message(tests.recall('conv')::uuid, 'user', 'third words')).id);
select is_empty(
    format($$select 1 from memory_private.jobs where user_id = %L and kind = 'embed'$$, tests.recall('u')),
    'writing messages queues nothing (the write path stays lean)'
);
select tests.authenticate_as_service_role();
select ok(memory.queue_embeddings() >= 1, 'the scan queues the users whose messages wait for a vector');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('u')::uuid and kind = 'embed'),
    1, 'three messages of one user: one embed job'
);

select tests.authenticate_as_service_role();
select tests.remember('job', (select id from memory.claim_jobs(array['embed'], 'w1', 1, p_user_ids => array[tests.recall('u')::uuid])));
select tests.remember('input', memory.embedding_input(tests.recall('job')::bigint, 'w1'));
select is(tests.recall('input')::jsonb ->> 'model', 'test-2d', 'the input names the current model');
select is((tests.recall('input')::jsonb ->> 'dimensions')::integer, 2, 'and its dimensions');
select is(
    (select array_agg((i ->> 'id')::bigint) from jsonb_array_elements(tests.recall('input')::jsonb -> 'items') as i),
    array[tests.recall('m3')::bigint, tests.recall('m2')::bigint],
    'a batch of the user''s newest rows without a vector'
);
select throws_ok(
    format(
        $$select memory.finish_embeddings(%s, 'w1', 'test-2d', '[{"kind": "message", "id": "%s", "embedding": [1, 0, 0]}]')$$,
        tests.recall('job'), tests.recall('m3')
    ),
    '22023', 'each item needs kind (message or memory), id, and an embedding of 2 numbers or refused (why)',
    'a vector of other dimensions refuses the batch'
);
select throws_ok(
    format($$select memory.finish_embeddings(%s, 'w1', 'test-2d', '{"kind": "message"}')$$, tests.recall('job')),
    '22023', 'items must be a JSON array', 'items that are not an array are refused'
);
select throws_ok(
    format(
        $$select memory.finish_embeddings(%s, 'w1', 'test-2d', '[{"kind": "message", "id": "%s", "embedding": [70000, 0]}]')$$,
        tests.recall('job'), tests.recall('m3')
    ),
    '22003', null, 'a number beyond half precision (65,504) refuses the batch'
);
select is(
    (select count(*)::integer from memory_private.message_embeddings where user_id = tests.recall('u')::uuid),
    0, 'nothing was written by the refused results'
);

-- A message written while the job runs is seen by the job's final check.
select tests.clear_authentication();
select tests.remember('m4', (memory.add_message(tests.recall('conv')::uuid, 'user', 'fourth words')).id);
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'running', 'a write while the job runs leaves it running'
);
select tests.authenticate_as_service_role();
select is(
    memory.finish_embeddings(tests.recall('job')::bigint, 'w1', 'test-2d', format(
        '[{"kind": "message", "id": "%s", "embedding": [1, 0]}, {"kind": "message", "id": "%s", "embedding": [0, 1]}]',
        tests.recall('m3'), tests.recall('m2')
    )::jsonb) ->> 'stored',
    '2', 'the batch is stored'
);
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'queued', 'rows remain (the first and the one written meanwhile), so the job is queued again'
);
select is(
    (select embedding::text from memory_private.message_embeddings where message_id = tests.recall('m3')::bigint),
    '[1,0]', 'the vector is stored under the message'
);

-- The next batch: the newest first again; then nothing remains and the job is done.
select is(
    (select id from memory.claim_jobs(array['embed'], 'w1', 1, p_user_ids => array[tests.recall('u')::uuid])),
    tests.recall('job')::bigint, 'the same job is claimed again'
);
select is(
    (select array_agg((i ->> 'id')::bigint) from jsonb_array_elements(
        memory.embedding_input(tests.recall('job')::bigint, 'w1') -> 'items'
    ) as i),
    array[tests.recall('m4')::bigint, tests.recall('m1')::bigint],
    'the rest of the rows'
);
select memory.finish_embeddings(tests.recall('job')::bigint, 'w1', 'test-2d', format(
    '[{"kind": "message", "id": "%s", "embedding": [1, 1]}, {"kind": "message", "id": "%s", "embedding": [0, 1]}]',
    tests.recall('m4'), tests.recall('m1')
)::jsonb);
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'done', 'every row has a vector: the job is done'
);

-- Editing a message drops its vector and queues the job again.
select tests.clear_authentication();
update memory.messages set content = 'first words, edited' where id = tests.recall('m1')::bigint;
select is_empty(
    format('select 1 from memory_private.message_embeddings where message_id = %s', tests.recall('m1')),
    'an edited message loses its stale vector'
);
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'queued', 'and its user''s embed job is queued again'
);

-- A result computed under a model that is no longer current stores nothing.
select tests.authenticate_as_service_role();
select memory.claim_jobs(array['embed'], 'w1', 1, p_user_ids => array[tests.recall('u')::uuid]);
select memory.set_embedding_model('test-2d-v2', 2);
select is(
    memory.finish_embeddings(tests.recall('job')::bigint, 'w1', 'test-2d', format(
        '[{"kind": "message", "id": "%s", "embedding": [1, 0]}]', tests.recall('m1')
    )::jsonb),
    '{"stored": 0, "refused": 0, "current_model": false}'::jsonb,
    'vectors of the old model are not stored'
);
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'queued', 'and the job is queued again to embed under the new model'
);
select ok(
    exists (
        select 1 from pg_indexes
        where schemaname = 'memory_private' and tablename = 'message_embeddings'
            and indexdef like '%hnsw%halfvec(2)%halfvec_cosine_ops%' and indexdef like '%test-2d-v2%'
    ),
    'the new model has its HNSW index'
);
select ok(
    not exists (
        select 1 from pg_indexes
        where schemaname = 'memory_private' and tablename = 'memory_embeddings' and indexdef like '%hnsw%'
    ),
    'memories have no HNSW index: they are searched exactly, per user'
);
select throws_ok(
    $$select memory.set_embedding_model('big', 4001)$$,
    '22023', 'dimensions must be 1..4000 (the HNSW limit)', 'a model beyond HNSW''s dimensions is refused'
);
select lives_ok(
    $$select memory.set_embedding_model('large-3072', 3072)$$,
    'a model of 3,072 dimensions (text-embedding-3-large) is taken'
);
select ok(
    exists (
        select 1 from pg_indexes
        where schemaname = 'memory_private' and tablename = 'message_embeddings'
            and indexdef like '%hnsw%halfvec(3072)%' and indexdef like '%large-3072%'
    ),
    'and gets its HNSW index'
);

select * from finish();
rollback;
