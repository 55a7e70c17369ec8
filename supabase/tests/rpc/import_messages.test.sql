-- memory.import_messages(messages, extract): a batch of messages, in order, into existing
-- conversations, numbered as memory_private.assign_turn numbers them one by one; each conversation
-- updated and trimmed once; no per-turn jobs, extraction through the gate only when asked. Only the
-- service role imports. Bad input is refused whole. The numbering trigger stands aside only for the
-- import's own insert: setting memory.importing yourself changes nothing.
begin;
select plan(33);

update memory_private.settings set value = '["extract", "summarize_conversation", "title"]' where key = 'job_kinds';
select tests.create_cast('rpc-import');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Imported', 'profile', tests.recall('profile')::uuid, p_window_turns => 3,
    p_ttl => interval '1 day')).id);
select tests.remember('other', (memory.create_conversation(tests.recall('owner')::uuid, 'Other', 'chat')).id);
select tests.remember('archived', (memory.create_conversation(tests.recall('owner')::uuid, 'Old', 'chat')).id);
update memory.conversations set archived = true where id = tests.recall('archived')::uuid;
select memory.add_turn(tests.recall('conv')::uuid, 'hello', 'hi');
select memory.add_message(tests.recall('other')::uuid, 'user', 'an open question');
delete from memory_private.jobs where user_id = tests.recall('owner')::uuid;

create temporary table batch as
select jsonb_build_array(
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'q2',
        'created_at', '2024-01-01T10:00:00Z', 'metadata', jsonb_build_object('source', 'old store')),
    jsonb_build_object('conversation_id', tests.recall('other'), 'role', 'assistant', 'content', 'the answer'),
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'assistant', 'content', 'a2'),
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'assistant', 'content', 'a3'),
    jsonb_build_object('conversation_id', tests.recall('other'), 'role', 'assistant', 'content', 'more'),
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'q4'),
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'q5',
        'tool_calls', '[{"name": "t"}]'::jsonb),
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'assistant', 'content', 'a5')
) as messages;
grant select on batch to public;

-- Nobody but the service role imports.
select tests.authenticate_as_anon();
select throws_ok($$select memory.import_messages((select messages from batch))$$, '42501', null, 'anon cannot import');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select memory.import_messages((select messages from batch))$$, '42501', null,
    'the owner cannot import (imports bypass per-turn numbering, so they are the service role''s)'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select memory.import_messages((select messages from batch))$$, '42501', null, 'a stranger cannot import');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select memory.import_messages((select messages from batch))$$, '42501', null, 'a tenant admin cannot import');
select tests.authenticate_as_service_role();
select results_eq(
    $$select conversation_id, imported, last_turn from memory.import_messages((select messages from batch))
    order by last_turn$$,
    $$values (tests.recall('other')::uuid, 2, 2), (tests.recall('conv')::uuid, 6, 5)$$,
    'the service role imports: per conversation, the messages imported and the last turn'
);
select tests.clear_authentication();

-- Numbered as one by one: an answer joins its question's turn, or the conversation's open turn.
select results_eq(
    $$select turn_number, role, content from memory.messages where conversation_id = tests.recall('other')::uuid
    order by turn_number, role desc$$,
    $$values (1, 'user', 'an open question'), (1, 'assistant', 'the answer'), (2, 'assistant', 'more')$$,
    'the first answer joins the open turn; the next opens a turn'
);
select results_eq(
    $$select turn_number, role, content from memory.messages where conversation_id = tests.recall('conv')::uuid
    order by turn_number, role desc$$,
    $$values (3, 'assistant', 'a3'), (4, 'user', 'q4'), (5, 'user', 'q5'), (5, 'assistant', 'a5')$$,
    'the window of 3 turns is kept: turns 1 and 2 left at once'
);
select is(
    (select last_turn from memory.conversations where id = tests.recall('conv')::uuid), 5,
    'the conversation''s turn counter moved to the last imported turn'
);
select ok(
    (select expires_at > now() + interval '23 hours' and updated_at = now() from memory.conversations
    where id = tests.recall('conv')::uuid),
    'the conversation was updated and its lifetime restarted'
);
select results_eq(
    $$select user_id, tenant_id, expires_at > now() + interval '23 hours', tool_calls
    from memory.messages where conversation_id = tests.recall('conv')::uuid and content = 'q5'$$,
    $$values (tests.recall('owner')::uuid, tests.recall('tenant_a')::uuid, true, '[{"name": "t"}]'::jsonb)$$,
    'messages carry the owner, the tenant, the conversation''s expiry and the fields given'
);
select is_empty(
    $$select 1 from memory_private.jobs where user_id = tests.recall('owner')::uuid$$,
    'an import queues no per-turn jobs (no extraction, summary or title)'
);
select is_empty($$select 1 from memory_private.imports$$, 'nothing is left in memory_private.imports');
select is(current_setting('memory.importing', true), '', 'the import setting is cleared afterwards');

-- created_at is the source store's; a later turn continues the numbering.
select tests.authenticate_as_service_role();
select memory.import_messages(jsonb_build_array(
    jsonb_build_object('conversation_id', tests.recall('other'), 'role', 'user', 'content', 'dated',
        'created_at', '2024-01-01T10:00:00Z')
));
select tests.clear_authentication();
select is(
    (select created_at from memory.messages where conversation_id = tests.recall('other')::uuid and content = 'dated'),
    '2024-01-01T10:00:00Z'::timestamptz,
    'a message keeps the time the source store gave it'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'after', 'the import')$$,
    array[6],
    'a turn after the import continues the numbering'
);

-- Setting memory.importing yourself changes nothing: the trigger still numbers and checks.
select set_config('memory.importing', 'on', true);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'forged', 'still numbered')$$,
    array[7],
    'a caller who sets memory.importing still has their turn numbered'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'x', 99)$$,
    '23514', 'turn 99 would leave a gap',
    'a caller who sets memory.importing cannot choose a turn number'
);
select tests.clear_authentication();
select set_config('memory.importing', '', true);
select memory_private.queue_pending_extractions();
select ok(
    exists (select 1 from memory_private.jobs where user_id = tests.recall('owner')::uuid and kind = 'extract'),
    'turns outside an import queue their jobs as before'
);

-- With p_extract, the imported questions are queued through the gate.
delete from memory_private.jobs where user_id = tests.recall('owner')::uuid;
select tests.authenticate_as_service_role();
select memory.import_messages(jsonb_build_array(
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'I moved to Lisbon'),
    jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'assistant', 'content', 'Congratulations!'),
    jsonb_build_object('conversation_id', tests.recall('other'), 'role', 'user', 'content', 'not gated: a chat')
), true);
select tests.clear_authentication();
select results_eq(
    $$select m.content from memory_private.jobs as j
    join memory.messages as m on m.id = (j.payload ->> 'source_message_id')::bigint
    where j.user_id = tests.recall('owner')::uuid and j.kind = 'extract'$$,
    $$values ('I moved to Lisbon')$$,
    'p_extract queues the imported questions the gate lets through, and nothing else'
);

-- Bad input is refused whole and changes nothing.
create temporary table before_bad as select count(*) as n from memory.messages;
grant select on before_bad to public;
select tests.authenticate_as_service_role();
select throws_ok($$select memory.import_messages('{}')$$, '22023', 'messages must be a JSON array of 1 to 10000 messages',
    'an object is not a batch');
select throws_ok($$select memory.import_messages('[]')$$, '22023', null, 'an empty batch is refused');
select throws_ok(
    $$select memory.import_messages((select jsonb_agg(jsonb_build_object('conversation_id', tests.recall('conv'),
        'role', 'user', 'content', 'x')) from generate_series(1, 10001)))$$,
    '22023', null, 'more than 10,000 messages are refused'
);
select throws_ok(
    $$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'ok'),
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'x', 'turn_number', 1)))$$,
    '22023', 'message 2 is not a message', 'an unknown field (a turn number) is refused, naming the message'
);
select throws_ok(
    format($$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'ok'),
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'x',
            'metadata', %L::jsonb)))$$, '{"a": ' || repeat('[', 64) || repeat(']', 64) || '}'),
    '22023', 'message 2 nests deeper than 64 levels', 'metadata nested past 64 levels is refused, naming the message'
);
select throws_ok(
    format($$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', %L)))$$,
        repeat('x', 100001)),
    '22023', 'message 1 is longer than 100000 characters', 'so is one past 100,000 characters'
);
select throws_ok(
    $$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'ok'),
        jsonb_build_object('conversation_id', gen_random_uuid(), 'role', 'user', 'content', 'x')))$$,
    'P0002', 'conversation not found', 'a conversation that does not exist refuses the batch'
);
select throws_ok(
    $$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('archived'), 'role', 'user', 'content', 'x')))$$,
    '55000', 'conversation is archived', 'an archived conversation refuses the batch'
);
select throws_ok(
    $$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', 'x',
            'author_id', tests.recall('stranger'))))$$,
    '23503', 'message author is not a participant of the conversation',
    'an author who is not in the conversation refuses the batch'
);
select throws_ok(
    $$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'system', 'content', 'x')))$$,
    '22023', 'message 1 has a role other than user or assistant', 'a role other than user or assistant refuses the batch'
);
select throws_ok(
    $$select memory.import_messages(jsonb_build_array(
        jsonb_build_object('conversation_id', tests.recall('conv'), 'role', 'user', 'content', '  ')))$$,
    '22023', 'message 1 has no content', 'empty content refuses the batch, naming the message'
);
select tests.clear_authentication();
select is((select count(*) from memory.messages), (select n from before_bad), 'refused batches stored nothing');

-- The capability table is the import's alone.
select tests.authenticate_as_service_role();
select throws_ok($$select * from memory_private.imports$$, '42501', null, 'the service role cannot read imports');
select throws_ok($$insert into memory_private.imports default values$$, '42501', null, 'nor write it');
select tests.clear_authentication();

select * from finish();
rollback;
