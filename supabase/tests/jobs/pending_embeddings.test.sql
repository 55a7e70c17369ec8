-- Every message notes itself for a vector (memory_private.pending_embeddings) when it is written,
-- by a turn or an import, and again when its vector is dropped (an edit, its context deleted, a
-- new model). An embed job reads its user's notes, newest first, not the user's history, and drops
-- the notes of messages deleted meanwhile; storing the batch takes its notes away, except the note
-- of a message whose text changed meanwhile. The minutely scan queues the users with notes and no
-- embed job waiting (a dead one an hour after it died). Nobody but the service reads or writes the
-- notes directly. A new model notes every message through a scan, newest first, a batch a pass.
begin;
select plan(47);

select tests.create_cast('embed-notes');
update memory_private.settings set value = '2' where key = 'embedding_batch';
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Notes', p_window_turns => 1000)).id);
create function pg_temp.notes() returns bigint[] language sql as $$
    select coalesce(array_agg(n.message_id order by n.message_id), '{}')
    from memory_private.pending_embeddings as n
    where n.user_id = tests.recall('owner')::uuid
$$;

-- What notes itself.
select tests.remember('q1', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'I keep bees', 'Sweet.')));
select tests.remember('a1', (select id from memory.messages
    where conversation_id = tests.recall('conv')::uuid and turn_number = 1 and role = 'assistant'));
select is(pg_temp.notes(), array[tests.recall('q1'), tests.recall('a1')]::bigint[], 'a turn notes both its messages');
select tests.remember('q2', (memory.add_message(tests.recall('conv')::uuid, 'user', 'And I sell the honey')).id);
select is(
    pg_temp.notes(), array[tests.recall('q1'), tests.recall('a1'), tests.recall('q2')]::bigint[],
    'a message written alone notes itself'
);
select is_empty(
    format($$select 1 from memory_private.jobs where user_id = %L and kind = 'embed'$$, tests.recall('owner')),
    'writing queues no embed job'
);
select tests.remember('short', (memory.create_conversation(tests.recall('owner')::uuid, 'Short', p_window_turns => 1)).id);
select tests.authenticate_as_service_role();
select memory.import_messages(jsonb_build_array(
    jsonb_build_object('conversation_id', tests.recall('short'), 'role', 'user', 'content', 'old question'),
    jsonb_build_object('conversation_id', tests.recall('short'), 'role', 'assistant', 'content', 'old answer'),
    jsonb_build_object('conversation_id', tests.recall('short'), 'role', 'user', 'content', 'new question'),
    jsonb_build_object('conversation_id', tests.recall('short'), 'role', 'assistant', 'content', 'new answer')
));
select tests.clear_authentication();
select results_eq(
    $$select m.content from memory_private.pending_embeddings as n join memory.messages as m on m.id = n.message_id
    where m.conversation_id = tests.recall('short')::uuid order by m.id$$,
    $$values ('new question'), ('new answer')$$,
    'an import notes the messages its window keeps'
);
select is(
    (select count(*)::integer from memory_private.pending_embeddings where user_id = tests.recall('owner')::uuid),
    5, 'and no note of the messages it trimmed is left for a job to look for'
);

-- The scan queues the users with notes, once.
select tests.authenticate_as_service_role();
select ok(memory.queue_embeddings() >= 1, 'the scan queues the users with notes');
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('owner')::uuid and kind = 'embed'),
    1, 'one embed job for the user'
);
select is(
    (select count(*)::integer from memory_private.jobs as j
    where j.kind = 'embed' and j.user_id = tests.recall('stranger')::uuid),
    0, 'and none for a user without notes'
);
select memory.queue_embeddings();
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('owner')::uuid and kind = 'embed'),
    1, 'a second scan leaves the queued job as it is'
);

-- The job reads the notes, newest first, whatever vectors the user's other messages have.
select tests.remember('job', (select id from memory.claim_jobs(
    array['embed'], 'w1', 1, p_user_ids => array[tests.recall('owner')::uuid])));
select tests.clear_authentication();
select tests.remember('q3', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Bees in winter?')).id);
insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
select m.id, m.user_id, memory_private.setting('embedding_model') ->> 0, array_fill(0.1, array[384])::extensions.vector
from memory.messages as m where m.id = tests.recall('q3')::bigint;
delete from memory_private.pending_embeddings where message_id = tests.recall('q3')::bigint;
delete from memory.messages where id = tests.recall('q1')::bigint;
select tests.authenticate_as_service_role();
select tests.remember('input', memory.embedding_input(tests.recall('job')::bigint, 'w1'));
select is(
    (select array_agg((i ->> 'id')::bigint) from jsonb_array_elements(tests.recall('input')::jsonb -> 'items') as i),
    (select array_agg(n.message_id order by n.message_id desc) from (
        select n.message_id from memory_private.pending_embeddings as n
        where n.user_id = tests.recall('owner')::uuid order by n.message_id desc limit 2
    ) as n),
    'a batch of the newest notes'
);
select is(
    memory.finish_embeddings(tests.recall('job')::bigint, 'w1', 'offline-hash-384', (
        select jsonb_agg(jsonb_build_object('kind', i ->> 'kind', 'id', i ->> 'id', 'embedding', array_fill(0.2, array[384])))
        from jsonb_array_elements(tests.recall('input')::jsonb -> 'items') as i
    )) ->> 'stored',
    '2', 'the batch is stored'
);
select is(
    pg_temp.notes(), array[tests.recall('a1'), tests.recall('q2')]::bigint[],
    'its notes are gone, and the input dropped the note of a message deleted before it had a vector'
);
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'queued', 'a note remains, so the job is queued again'
);
select memory.claim_jobs(array['embed'], 'w1', 1, p_user_ids => array[tests.recall('owner')::uuid]);
select memory.finish_embeddings(tests.recall('job')::bigint, 'w1', 'offline-hash-384', (
    select jsonb_agg(jsonb_build_object('kind', i ->> 'kind', 'id', i ->> 'id', 'embedding', array_fill(0.2, array[384])))
    from jsonb_array_elements(memory.embedding_input(tests.recall('job')::bigint, 'w1') -> 'items') as i
));
select is(pg_temp.notes(), '{}'::bigint[], 'the last note goes with the last batch');
select is(
    (select status from memory_private.jobs where id = tests.recall('job')::bigint),
    'done', 'and the job is done'
);

-- Dropped vectors note their messages again.
select tests.clear_authentication();
update memory.messages set content = 'Sweet, indeed.' where id = tests.recall('a1')::bigint;
select is(
    pg_temp.notes(), array[tests.recall('a1'), tests.recall('q2')]::bigint[],
    'an edit notes the message and the next one, embedded with its end'
);
delete from memory_private.pending_embeddings where user_id = tests.recall('owner')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.delete_message(tests.recall('q2')::bigint);
select tests.clear_authentication();
select is(
    pg_temp.notes(), array[tests.recall('q3')]::bigint[],
    'deleting a message notes the next one, whose vector held the deleted words'
);
select tests.remember('memory_only', memory.user_id_for('embed-notes-memory-only'));
insert into memory.memories (user_id, content, type) values (tests.recall('memory_only')::uuid, 'Keeps no bees', 'fact');
delete from memory_private.jobs where kind = 'embed';
select tests.authenticate_as_service_role();
select memory.set_embedding_model('notes-2d', 2);
select is(
    pg_temp.notes(),
    (select array_agg(m.id order by m.id) from memory.messages as m where m.user_id = tests.recall('owner')::uuid),
    'a new model notes the newest messages at once: here all of the user''s'
);
select is(
    (select array_agg(j.user_id order by j.user_id) from memory_private.jobs as j
     where j.kind = 'embed' and j.status = 'queued'
        and j.user_id in (tests.recall('owner')::uuid, tests.recall('memory_only')::uuid)),
    (select array_agg(u order by u) from unnest(array[tests.recall('owner')::uuid, tests.recall('memory_only')::uuid]) as u),
    'and queues their users, and a user with memories and no message'
);
select tests.clear_authentication();
delete from memory_private.pending_embeddings where user_id = tests.recall('owner')::uuid;
select tests.authenticate_as_service_role();
select is(
    memory_private.note_for_new_model(1, p_restart => true), 1,
    'a pass of the scan notes the next messages, newest first'
);
select is(pg_temp.notes(), array[tests.recall('q3')]::bigint[], 'the first pass took the newest message');
select memory_private.note_for_new_model(2147483647);
select is_empty(
    $$select 1 from memory.messages as m where not exists (
        select 1 from memory_private.pending_embeddings as n where n.user_id = m.user_id and n.message_id = m.id
    )$$,
    'passes note every message'
);
select is(memory_private.note_for_new_model(), 0, 'a pass past the oldest message notes nothing');
select is_empty(
    $$select 1 from memory_private.message_scans where name = 'embedding_model'$$,
    'and ends the scan'
);

-- A dead embed job (its retries spent) is queued again an hour after it died, not at every scan.
select tests.clear_authentication();
update memory_private.jobs set status = 'dead', failed_at = now()
where kind = 'embed' and dedup_key = 'embed:' || tests.recall('owner');
select tests.authenticate_as_service_role();
select memory.queue_embeddings();
select is(
    (select status from memory_private.jobs where kind = 'embed' and dedup_key = 'embed:' || tests.recall('owner')),
    'dead', 'a scan leaves a job that died within the hour'
);
select tests.clear_authentication();
update memory_private.jobs set failed_at = now() - interval '61 minutes'
where kind = 'embed' and dedup_key = 'embed:' || tests.recall('owner');
select tests.authenticate_as_service_role();
select memory.queue_embeddings();
select is(
    (select status from memory_private.jobs where kind = 'embed' and dedup_key = 'embed:' || tests.recall('owner')),
    'queued', 'and queues it again after the hour while its user''s messages wait'
);
-- A user with only memories left without a vector: no note names them, the dead job still does.
select tests.clear_authentication();
delete from memory_private.pending_embeddings where user_id = tests.recall('owner')::uuid;
insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Keeps three hives', 'fact');
update memory_private.jobs set status = 'dead', failed_at = now() - interval '61 minutes', leased_until = null
where kind = 'embed' and dedup_key = 'embed:' || tests.recall('owner');
select tests.authenticate_as_service_role();
select is(memory.queue_embeddings(), 1, 'a scan queues again the dead job of a user whose memories wait for a vector');
select is(
    (select status from memory_private.jobs where kind = 'embed' and dedup_key = 'embed:' || tests.recall('owner')),
    'queued', 'though no note names them'
);
select tests.clear_authentication();
delete from memory.memories where user_id = tests.recall('owner')::uuid and content = 'Keeps three hives';
select tests.authenticate_as_service_role();

-- A message edited while its batch is embedded keeps its note: the vector is of its old text.
select tests.clear_authentication();
delete from memory_private.pending_embeddings where user_id = tests.recall('owner')::uuid;
select tests.remember('x', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Queen bees live long')).id);
select tests.authenticate_as_service_role();
select tests.remember('job2', (select id from memory.claim_jobs(
    array['embed'], 'w2', 1, p_user_ids => array[tests.recall('owner')::uuid])));
select tests.remember('input2', memory.embedding_input(tests.recall('job2')::bigint, 'w2'));
select tests.clear_authentication();
update memory.messages set content = 'Queen bees live for years' where id = tests.recall('x')::bigint;
select tests.authenticate_as_service_role();
select is(
    memory.finish_embeddings(tests.recall('job2')::bigint, 'w2', 'notes-2d', (
        select jsonb_agg(jsonb_build_object(
            'kind', i ->> 'kind', 'id', i ->> 'id', 'version', i ->> 'version', 'embedding', array[0.5, 0.5]
        ))
        from jsonb_array_elements(tests.recall('input2')::jsonb -> 'items') as i
    )) ->> 'stored',
    '0', 'a message edited while its batch was embedded gets no vector of its old text'
);
select is(pg_temp.notes(), array[tests.recall('x')]::bigint[], 'and keeps its note for the next batch');
select is(
    (select status from memory_private.jobs where id = tests.recall('job2')::bigint),
    'queued', 'which the job, queued again, reads'
);

-- An erased user's notes go with the user; the scan does nothing while embed jobs are off.
select tests.clear_authentication();
select tests.remember('gone', memory.user_id_for('embed-notes.gone'));
select memory.add_message((memory.create_conversation(tests.recall('gone')::uuid, 'Bye')).id, 'user', 'Forget me');
select tests.authenticate_as_service_role();
select memory.erase_user(tests.recall('gone')::uuid);
select is_empty(
    $$select 1 from memory_private.pending_embeddings where user_id = tests.recall('gone')::uuid$$,
    'an erased user leaves no note'
);
select tests.clear_authentication();
update memory_private.settings set value = value - 'embed' where key = 'job_kinds';
delete from memory_private.jobs where kind = 'embed';
select tests.authenticate_as_service_role();
select is(memory.queue_embeddings(), 0, 'with embed jobs off the scan queues nothing');
select tests.clear_authentication();
select is((select count(*)::integer from memory_private.jobs where kind = 'embed'), 0, 'no embed job at all');

-- Who may read and write the notes.
select tests.authenticate_as_anon();
select throws_ok($$select * from memory_private.pending_embeddings$$, '42501', null, 'anon cannot read the notes');
select throws_ok($$select memory_private.queue_embeddings()$$, '42501', null, 'anon cannot run the scan');
select throws_ok($$select memory_private.note_for_new_model()$$, '42501', null, 'anon cannot note for a new model');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select * from memory_private.pending_embeddings$$, '42501', null, 'the owner cannot read the notes');
select throws_ok(
    $$delete from memory_private.pending_embeddings$$, '42501', null,
    'the owner cannot take a note away'
);
select throws_ok($$select memory.queue_embeddings()$$, '42501', null, 'the owner cannot run the scan');
select throws_ok(
    $$select memory_private.note_for_new_model()$$, '42501', null, 'the owner cannot note for a new model'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select * from memory_private.pending_embeddings$$, '42501', null, 'a stranger cannot read the notes');
select throws_ok(
    $$select memory_private.note_for_new_model()$$, '42501', null, 'a stranger cannot note for a new model'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select * from memory_private.pending_embeddings$$, '42501', null, 'a tenant admin cannot read the notes');
select throws_ok(
    $$select memory_private.note_for_new_model()$$, '42501', null, 'a tenant admin cannot note for a new model'
);
select tests.authenticate_as_service_role();
select lives_ok($$select count(*) from memory_private.pending_embeddings$$, 'service_role reads the notes');
select throws_ok(
    $$select memory_private.note_for_new_model(0)$$, '22023', null, 'a pass of no messages is refused'
);

select * from finish();
rollback;
