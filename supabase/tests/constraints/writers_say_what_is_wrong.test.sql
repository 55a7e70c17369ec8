-- The writers check their input and say what is wrong where the tables' check constraints named
-- only the constraint (messages_metadata_check, messages_tool_calls_check, user_kv_key_check,
-- user_kv_value_check, user_state_mode_check): the type of a message's metadata and tool calls, a
-- key-value key and value, a short-term key, a state's mode, and JSON nested past 64 levels (which
-- clients stop parsing somewhere: pydantic's parser at 200). Nothing is written. Sizes:
-- hostile_input_is_refused and message_content_and_role; a conversation's mode and window:
-- rpc/create_conversation.test.sql. A conversation's title, metadata and mode are checked when
-- updated through the Data API too, a profile's name and attributes (its time zone:
-- profile_time_zone_is_valid), and a memory's context.
begin;
select plan(34);

select tests.create_cast('writers-say');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid)).id);
select tests.authenticate_as(tests.recall('owner')::uuid);

select throws_ok(format($$select memory.add_turn(%L, 'Hi', ' ')$$, tests.recall('conv')),
    '22023', 'response must not be empty', 'a blank answer is refused');
select throws_ok(format($$select memory.add_turn(%L, 'Hi', 'Hello', '[1]')$$, tests.recall('conv')),
    '22023', 'metadata must be a JSON object, not array', 'metadata that is not an object');
select throws_ok(format($$select memory.add_turn(%L, 'Hi', 'Hello', p_tool_calls => '{}')$$, tests.recall('conv')),
    '22023', 'tool_calls must be a JSON array, not object', 'tool calls that are not an array');
select throws_ok(format($$select memory.add_message(%L, 'user', %L)$$, tests.recall('conv'), repeat('x', 100001)),
    '22023', 'content must be at most 100000 characters', 'add_message checks the same');
select throws_ok(format($$select memory.add_message(%L, 'user', 'Hi', '"text"')$$, tests.recall('conv')),
    '22023', 'metadata must be a JSON object, not string', 'and its metadata');
select lives_ok(
    format($$select memory.add_turn(%L, %L, 'Hello', p_tool_calls => '[]', p_suggested_values => '{"a": 1}')$$,
        tests.recall('conv'), repeat('x', 100000)),
    'a question of 100,000 characters with payloads of the right shape is stored'
);
select throws_ok(
    format($$select memory.add_turn(%L, 'Hi', 'Hello', %L::jsonb)$$, tests.recall('conv'),
        '{"a": ' || repeat('[', 64) || repeat(']', 64) || '}'),
    '22023', 'metadata must nest at most 64 levels deep', 'metadata nested deeper than 64 levels'
);
select lives_ok(
    format($$select memory.add_turn(%L, 'Hi', 'Hello', %L::jsonb)$$, tests.recall('conv'),
        '{"a": ' || repeat('[', 62) || repeat(']', 62) || '}'),
    'metadata 63 levels deep is stored'
);
select is((select count(*) from memory.messages where conversation_id = tests.recall('conv')::uuid), 4::bigint,
    'only those two turns were written');
-- An edit is checked as a new message is: the owner may update a message's metadata directly.
select throws_ok(
    format($$update memory.messages set metadata = %L where conversation_id = %L$$,
        '{"a": ' || repeat('[', 100) || repeat(']', 100) || '}', tests.recall('conv')),
    '22023', 'metadata must nest at most 64 levels deep', 'metadata nested 100 levels deep, set by an edit'
);
select throws_ok(
    format($$update memory.messages set metadata = '[]' where conversation_id = %L$$, tests.recall('conv')),
    '22023', 'metadata must be a JSON object, not array', 'metadata that is not an object, set by an edit'
);
-- A message inserted directly is checked when it carries JSON.
select throws_ok(
    format($$insert into memory.messages (conversation_id, role, content, metadata) values (%L, 'user', 'hi', %L)$$,
        tests.recall('conv'), '{"a": ' || repeat('[', 300) || repeat(']', 300) || '}'),
    '22023', 'metadata must nest at most 64 levels deep', 'metadata nested 300 levels deep, inserted directly'
);
-- An update checks only what it changes: a row stored before the rules (metadata nested deeper,
-- written here with the checks off, inside this test's transaction) can still be changed and edited.
select tests.clear_authentication();
alter table memory.conversations disable trigger conversations_defaults;
alter table memory.messages disable trigger messages_checked_on_update;
update memory.conversations set metadata = ('{"a": ' || repeat('[', 100) || repeat(']', 100) || '}')::jsonb
where id = tests.recall('conv')::uuid;
update memory.messages set metadata = ('{"a": ' || repeat('[', 100) || repeat(']', 100) || '}')::jsonb
where conversation_id = tests.recall('conv')::uuid;
alter table memory.conversations enable trigger conversations_defaults;
alter table memory.messages enable trigger messages_checked_on_update;
select tests.authenticate_as(tests.recall('owner')::uuid);
select lives_ok(
    format($$update memory.conversations set mode = 'astro' where id = %L$$, tests.recall('conv')),
    'a conversation with older, deeper metadata changes its mode'
);
select tests.authenticate_as_service_role();
select lives_ok(
    format($$update memory.messages set content = 'Edited' where conversation_id = %L and role = 'user'$$,
        tests.recall('conv')),
    'a message with older, deeper metadata is edited'
);
select tests.authenticate_as(tests.recall('owner')::uuid);

select throws_ok($$select memory.kv_set(' ', '{}')$$, '22023', 'key must not be empty', 'a blank key');
select throws_ok(format($$select memory.kv_set('deep', %L)$$, '{"a": ' || repeat('[', 300) || repeat(']', 300) || '}'),
    '22023', 'value must nest at most 64 levels deep', 'a value nested 300 levels deep');
select throws_ok(format($$select memory.kv_set(%L, '{}')$$, repeat('k', 201)), '22023',
    'key must be at most 200 characters', 'a key past 200 characters');
select throws_ok($$select memory.kv_set('prefs', '[1, 2]')$$, '22023', 'value must be a JSON object, not array',
    'a value that is not an object');
select throws_ok($$select memory.kv_set('prefs', null)$$, '22023', 'value must be a JSON object, not missing',
    'or no value');
select throws_ok($$select memory.short_term_set(null, '1')$$, '22023', 'key must not be empty',
    'a short-term value without a key');
-- The same on the Data API's way in (the tables' triggers).
select throws_ok(
    format($$insert into memory.user_kv (user_id, key, value) values (%L, 'deep', %L)$$, tests.recall('owner'),
        '{"a": ' || repeat('[', 100) || repeat(']', 100) || '}'),
    '22023', 'value must nest at most 64 levels deep', 'a value nested 100 levels deep, inserted directly'
);
select throws_ok(
    format($$insert into memory.short_term_state (user_id, key, value, expires_at) values (%L, ' ', '1', now() + interval '1 minute')$$,
        tests.recall('owner')),
    '22023', 'key must not be empty', 'a blank short-term key, inserted directly'
);
select throws_ok($$select memory.state_set('')$$, '22023', 'mode must not be empty', 'an empty state');
select throws_ok(format($$select memory.state_set(%L)$$, repeat('m', 101)), '22023',
    'mode must be at most 100 characters', 'a state past 100 characters');
select is(
    (select count(*) from memory.user_kv where user_id = tests.recall('owner')::uuid)
    + (select count(*) from memory.short_term_state where user_id = tests.recall('owner')::uuid)
    + (select count(*) from memory.user_state where user_id = tests.recall('owner')::uuid),
    0::bigint, 'no value, short-term value or state was written'
);

-- A conversation's columns are checked on every way in, an update through the Data API too.
select throws_ok(format($$update memory.conversations set title = %L where id = %L$$, repeat('t', 501),
    tests.recall('conv')), '22023', 'title must be at most 500 characters', 'a title past 500 characters');
select throws_ok(format($$update memory.conversations set metadata = '[1]' where id = %L$$, tests.recall('conv')),
    '22023', 'metadata must be a JSON object, not array', 'conversation metadata that is not an object');
select throws_ok(format($$update memory.conversations set mode = 'party' where id = %L$$, tests.recall('conv')),
    '23514', 'unknown conversation mode ''party''', 'an unknown mode');
select is((select title from memory.conversations where id = tests.recall('conv')::uuid), null, 'the title is as it was');
-- So is a profile's (memory_private.check_profile).
select throws_ok(
    format($$insert into memory.profiles (user_id, attributes) values (%L, %L)$$, tests.recall('owner'),
        '{"a": ' || repeat('[', 100) || repeat(']', 100) || '}'),
    '22023', 'attributes must nest at most 64 levels deep', 'profile attributes nested 100 levels deep'
);
select throws_ok(
    format($$insert into memory.profiles (user_id, name) values (%L, ' ')$$, tests.recall('owner')),
    '22023', 'name must not be empty', 'a blank profile name'
);
-- And a memory's context (memory_private.check_memory_row).
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true);
select throws_ok($$select memory.remember('Likes tea', 'preference', p_context => '[]')$$, '22023',
    'context must be a JSON object, not array', 'a memory''s context that is not an object');
select throws_ok(
    format($$select memory.remember('Likes tea', 'preference', p_context => %L)$$,
        '{"a": ' || repeat('[', 100) || repeat(']', 100) || '}'),
    '22023', 'context must nest at most 64 levels deep', 'a memory''s context nested 100 levels deep'
);
select lives_ok($$select memory.remember('Likes tea', 'preference', p_context => '{"from": "chat"}')$$,
    'a memory with a plain context is remembered');
select tests.clear_authentication();

select * from finish();
rollback;
