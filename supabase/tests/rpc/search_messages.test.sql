-- memory.search_messages(query, user, conversation, limit, offset): "what did I say about X?".
-- Words are OR-ed, in any order, and a turn matching more of them ranks first; a turn is also
-- found through a live memory extracted from it. Only the acting user's live messages, optionally
-- of one conversation; limit 1..200 and offset >= 0 (22023); a query of stop words finds nothing;
-- anon cannot call it.
begin;
select plan(22);

select tests.create_cast('rpc-search-messages');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Music', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('conv2', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Lessons', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('stranger_conv', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_window_turns => 1000)).id);

select tests.remember('guitar', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'I bought a new guitar yesterday', 'Enjoy it.')));
select tests.remember('piano', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'My piano teacher wants more scales', 'Scales help.')));
select tests.remember('both', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'Guitar and piano both need patience', 'They do.')));
select tests.remember('coast', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'We went to the coast last weekend', 'Sounds relaxing.')));
select tests.remember('vinyl_turn', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'I found a shop downtown', 'Nice find.')));
select tests.remember('expired', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'Old note about guitar strings', 'Ok.')));
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('conv')::uuid and turn_number = 6;
select tests.remember('lessons', (select user_message_id from memory.add_turn(
    tests.recall('conv2')::uuid, 'Guitar lessons start next week', 'Exciting.')));
select tests.remember('stranger_msg', (select user_message_id from memory.add_turn(
    tests.recall('stranger_conv')::uuid, 'Guitar piano guitar piano', 'Both.')));

-- Memories extracted from turns, in other words than the turns: a live one, a deleted one, and
-- one from the expired turn.
insert into memory.memories (user_id, content, type, source_message_id) values
(tests.recall('owner')::uuid, 'Enjoys surfing at the beach', 'preference', tests.recall('coast')::bigint),
(tests.recall('owner')::uuid, 'Collects vinyl records', 'fact', tests.recall('vinyl_turn')::bigint),
(tests.recall('owner')::uuid, 'Restrings instruments with nylon', 'fact', tests.recall('expired')::bigint);
update memory.memories set deleted_at = now(), active = false where content = 'Collects vinyl records' and user_id = tests.recall('owner')::uuid;

-- As the service, for the owner.
select tests.authenticate_as_service_role();
select results_eq(
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid) limit 1$$,
    $$values (tests.recall('both')::bigint)$$,
    'the turn with both words ranks first'
);
select results_eq(
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid) order by id$$,
    $$values (tests.recall('guitar')::bigint), (tests.recall('piano')::bigint), (tests.recall('both')::bigint), (tests.recall('lessons')::bigint)$$,
    'any of the words matches (OR): the owner''s turns with either word, in both conversations, not the stranger''s'
);
select results_eq(
    $$select id from memory.search_messages('piano guitar', tests.recall('owner')::uuid)$$,
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid)$$,
    'word order does not matter'
);
select results_eq(
    $$select id from memory.search_messages('Guitars!', tests.recall('owner')::uuid) order by id$$,
    $$values (tests.recall('guitar')::bigint), (tests.recall('both')::bigint), (tests.recall('lessons')::bigint)$$,
    'words are stemmed and punctuation ignored'
);
select results_eq(
    $$select id, content from memory.search_messages('where did I go surfing', tests.recall('owner')::uuid)$$,
    $$values (tests.recall('coast')::bigint, 'We went to the coast last weekend')$$,
    'a turn is found through the memory extracted from it, though its own words do not match'
);
select is_empty(
    $$select id from memory.search_messages('vinyl', tests.recall('owner')::uuid)$$,
    'a deleted memory finds nothing'
);
select is_empty(
    $$select id from memory.search_messages('strings nylon', tests.recall('owner')::uuid)$$,
    'an expired message is never returned, by its words or through its memory'
);
select results_eq(
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid, tests.recall('conv2')::uuid)$$,
    $$values (tests.recall('lessons')::bigint)$$,
    'p_conversation_id narrows to one conversation'
);
select is_empty(
    $$select id from memory.search_messages('surfing', tests.recall('owner')::uuid, tests.recall('conv2')::uuid)$$,
    'p_conversation_id also narrows the memories'
);
select is_empty(
    $$select id from memory.search_messages('the and of a', tests.recall('owner')::uuid)$$,
    'a query of only stop words finds nothing'
);
select is_empty(
    $$select id from memory.search_messages(null, tests.recall('owner')::uuid)$$,
    'a null query finds nothing'
);
select results_eq(
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid, p_limit => 1, p_offset => 1)$$,
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid) limit 1 offset 1$$,
    'limit and offset page through the ranking'
);
select throws_ok(
    $$select * from memory.search_messages('guitar', tests.recall('owner')::uuid, p_limit => 0)$$, '22023', null, 'limit 0 is refused'
);
select throws_ok(
    $$select * from memory.search_messages('guitar', tests.recall('owner')::uuid, p_limit => 201)$$, '22023', null, 'limit 201 is refused'
);
select lives_ok(
    $$select * from memory.search_messages('guitar', tests.recall('owner')::uuid, p_limit => 200)$$, 'limit 200 is accepted'
);
select throws_ok(
    $$select * from memory.search_messages('guitar', tests.recall('owner')::uuid, p_offset => -1)$$, '22023', null, 'a negative offset is refused'
);
select throws_ok(
    $$select * from memory.search_messages('guitar')$$, '22023', null, 'the service must name the user'
);

-- Signed in.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.search_messages('guitar piano') limit 1$$,
    $$values (tests.recall('both')::bigint)$$,
    'a signed-in owner searches their own messages without naming themselves'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select results_eq(
    $$select id from memory.search_messages('guitar piano')$$,
    $$values (tests.recall('stranger_msg')::bigint)$$,
    'a signed-in stranger finds only their own messages'
);
select is_empty(
    $$select id from memory.search_messages('guitar piano surfing', tests.recall('owner')::uuid)$$,
    'a signed-in stranger naming the owner finds nothing of the owner''s'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.search_messages('guitar piano', tests.recall('owner')::uuid)$$,
    'another tenant''s admin naming the owner finds nothing'
);

select tests.authenticate_as_anon();
select throws_ok($$select * from memory.search_messages('guitar')$$, '42501', null, 'anon cannot search messages');

select * from finish();
rollback;
