-- A message is embedded with the end of the message before it in its own conversation
-- (embedding_context_chars; 0 embeds it alone), and editing a message drops the vector of the
-- message after it, whose embedded text has changed, as well as its own; deleting a message drops
-- the next one's, so the deleted words leave search.
begin;
select plan(11);

select tests.remember('u', memory.user_id_for('embed-context.u'));
select tests.remember('conv', (memory.create_conversation(tests.recall('u')::uuid, 'Context')).id);
select tests.remember('other', (memory.create_conversation(tests.recall('u')::uuid, 'Other')).id);
select tests.remember('m1', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Where should I run?')).id);
select tests.remember('b1', (memory.add_message(tests.recall('other')::uuid, 'user', 'Bread recipe?')).id);
select tests.remember('m2', (memory.add_message(tests.recall('conv')::uuid, 'assistant', 'Along the river.')).id);
select tests.remember('m3', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Yes, in May.')).id);

-- Every message of the user gets a vector, as the embed job would leave them.
create function pg_temp.embed_all() returns void language sql as $$
    insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
    select m.id, m.user_id, memory_private.setting('embedding_model') ->> 0, array_fill(0.1, array[384])::extensions.vector
    from memory.messages as m
    where m.user_id = tests.recall('u')::uuid
    on conflict (message_id) do nothing;
    delete from memory_private.pending_embeddings where user_id = tests.recall('u')::uuid;
$$;

create temporary table embedded_text as
select u.id::bigint as id, u.content from memory_private.unembedded(tests.recall('u')::uuid, 10) as u;
select is(
    (select content from embedded_text where id = tests.recall('m3')::bigint),
    e'Along the river.\nYes, in May.', 'a question is embedded after the answer before it'
);
select is(
    (select content from embedded_text where id = tests.recall('m2')::bigint),
    e'Where should I run?\nAlong the river.', 'an answer after its question'
);
select is(
    (select content from embedded_text where id = tests.recall('m1')::bigint),
    'Where should I run?', 'the first message alone'
);
select is(
    (select content from embedded_text where id = tests.recall('b1')::bigint),
    'Bread recipe?', 'another conversation''s messages are never context, even when written between'
);

update memory_private.settings set value = '6' where key = 'embedding_context_chars';
select is(
    (select u.content from memory_private.unembedded(tests.recall('u')::uuid, 10) as u where u.id = tests.recall('m3')),
    e'river.\nYes, in May.', 'embedding_context_chars: the end of the message before'
);
update memory_private.settings set value = '0' where key = 'embedding_context_chars';
select is(
    (select u.content from memory_private.unembedded(tests.recall('u')::uuid, 10) as u where u.id = tests.recall('m3')),
    'Yes, in May.', 'embedding_context_chars 0: the message alone'
);

select pg_temp.embed_all();
update memory.messages set content = 'Along the canal.' where id = tests.recall('m2')::bigint;
select is(
    array(
        select m.id from memory.messages as m
        where m.user_id = tests.recall('u')::uuid and not exists (
            select 1 from memory_private.message_embeddings as e where e.message_id = m.id
        )
        order by m.id
    ),
    array[tests.recall('m2')::bigint, tests.recall('m3')::bigint],
    'an edit drops the edited message''s vector and the next one''s, no other'
);
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('u')::uuid and kind = 'embed'),
    1, 'and queues the user''s embed job'
);


-- Deleting: the next message's vector goes.
update memory_private.settings set value = '400' where key = 'embedding_context_chars';
select pg_temp.embed_all();
delete from memory_private.jobs where user_id = tests.recall('u')::uuid;
select tests.authenticate_as(tests.recall('u')::uuid);
select memory.delete_message(tests.recall('m2')::bigint);
select tests.clear_authentication();
select is(
    array(
        select m.id from memory.messages as m
        where m.user_id = tests.recall('u')::uuid and not exists (
            select 1 from memory_private.message_embeddings as e where e.message_id = m.id
        )
        order by m.id
    ),
    array[tests.recall('m3')::bigint],
    'the owner deleting a message drops the next one''s vector, no other'
);
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('u')::uuid and kind = 'embed'),
    1, 'and queues the user''s embed job'
);
select is(
    (select u.content from memory_private.unembedded(tests.recall('u')::uuid, 10) as u where u.id = tests.recall('m3')),
    e'Where should I run?\nYes, in May.', 'which embeds it after the message now before it'
);

select * from finish();
rollback;
