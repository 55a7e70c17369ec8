-- The memory gate (seed 004's key rule), row by row, through both write paths: an extraction
-- (memory.apply_extraction as service_role answers a closed gate with one 'skipped: <reason>'
-- row and stores nothing) and memory.remember naming a source message (a closed gate raises
-- 42501; no API role inserts rows directly, and the table's trigger refuses the same to the table
-- owner: see direct_writes_cannot_bypass_the_rules.test.sql). A memory is made only from the
-- user's own message in a conversation where the profile that user selected is their primary one,
-- "remember" is on (off by default in swiss mode) and the user has not paused memory. In together
-- mode each participant's memory follows their own profile; switching the primary profile leaves
-- old memories where they were.
begin;
select plan(40);

-- Users: A owns the conversations, B and C take part in A's together conversation, P paused.
select tests.remember('a', memory.user_id_for('memories-gate.a'));
select tests.remember('b', memory.user_id_for('memories-gate.b'));
select tests.remember('c', memory.user_id_for('memories-gate.c'));
select tests.remember('p', memory.user_id_for('memories-gate.p'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('a')::uuid, 'A main', true) returning id)
select tests.remember('pa_main', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('a')::uuid, 'A other', false) returning id)
select tests.remember('pa_other', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('b')::uuid, 'B main', true) returning id)
select tests.remember('pb_main', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('c')::uuid, 'C main', true) returning id)
select tests.remember('pc_main', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('p')::uuid, 'P main', true) returning id)
select tests.remember('pp_main', id) from p;
select memory.set_memory_settings(p_memory_paused => true, p_user_id => tests.recall('p')::uuid);

-- One conversation (and one user message in it) per row of the table.
select tests.remember('conv_generic', (memory.create_conversation(tests.recall('a')::uuid, 'Generic', 'chat')).id);
select tests.remember('conv_other', (memory.create_conversation(tests.recall('a')::uuid, 'Other', 'chat', tests.recall('pa_other')::uuid)).id);
select tests.remember('conv_main', (memory.create_conversation(tests.recall('a')::uuid, 'Main', 'profile', tests.recall('pa_main')::uuid)).id);
select tests.remember('conv_off', (memory.create_conversation(tests.recall('a')::uuid, 'Off', 'chat', tests.recall('pa_main')::uuid, false)).id);
select tests.remember('conv_paused', (memory.create_conversation(tests.recall('p')::uuid, 'Paused', 'chat', tests.recall('pp_main')::uuid)).id);
select tests.remember('conv_swiss', (memory.create_conversation(tests.recall('a')::uuid, 'Swiss', 'swiss', tests.recall('pa_main')::uuid)).id);
select tests.remember('conv_swiss_on', (memory.create_conversation(tests.recall('a')::uuid, 'Swiss on', 'swiss', tests.recall('pa_main')::uuid, true)).id);
select tests.remember('conv_together', (memory.create_conversation(tests.recall('a')::uuid, 'Together', 'together', tests.recall('pa_main')::uuid)).id);
-- B picked their own primary profile in A's conversation; C picked none.
insert into memory.participants (conversation_id, user_id, profile_id) values
(tests.recall('conv_together')::uuid, tests.recall('b')::uuid, tests.recall('pb_main')::uuid),
(tests.recall('conv_together')::uuid, tests.recall('c')::uuid, null);

select tests.remember('msg_generic', (select user_message_id from memory.add_turn(tests.recall('conv_generic')::uuid, 'I live in Manila', 'Nice.')));
select tests.remember('msg_other', (select user_message_id from memory.add_turn(tests.recall('conv_other')::uuid, 'I live in Cebu', 'Nice.')));
with t as (select * from memory.add_turn(tests.recall('conv_main')::uuid, 'My goal is a marathon', 'Great goal.'))
select tests.remember('msg_main', t.user_message_id), tests.remember('msg_answer', t.assistant_message_id) from t;
select tests.remember('msg_off', (select user_message_id from memory.add_turn(tests.recall('conv_off')::uuid, 'I have a cat', 'Cute.')));
select tests.remember('msg_paused', (select user_message_id from memory.add_turn(tests.recall('conv_paused')::uuid, 'I have a dog', 'Cute.')));
select tests.remember('msg_swiss', (select user_message_id from memory.add_turn(tests.recall('conv_swiss')::uuid, 'Quick chart please', 'Here.')));
select memory.add_turn(tests.recall('conv_swiss_on')::uuid, 'First swiss question', 'First answer.');
select tests.remember('msg_swiss_on', (select user_message_id from memory.add_turn(tests.recall('conv_swiss_on')::uuid, 'I was born in Davao', 'Noted.')));
select tests.remember('msg_b', (select user_message_id from memory.add_turn(
    tests.recall('conv_together')::uuid, 'I am B and I paint', 'Lovely.', p_author_id => tests.recall('b')::uuid
)));
-- A second message of B's for the owner's row of the table: the extraction ledger is keyed by the
-- source message, so the owner's skipped attempt must not use up B's own message.
select tests.remember('msg_b_for_a', (select user_message_id from memory.add_turn(
    tests.recall('conv_together')::uuid, 'I am B and I travel', 'Lovely.', p_author_id => tests.recall('b')::uuid
)));
select tests.remember('msg_c', (select user_message_id from memory.add_turn(
    tests.recall('conv_together')::uuid, 'I am C and I sing', 'Lovely.', p_author_id => tests.recall('c')::uuid
)));

select tests.authenticate_as_service_role();

-- Closed: a generic chat (no profile selected).
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_generic')::bigint, '[{"content": "Lives in Manila", "type": "fact"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: no profile is selected in the conversation')$$,
    'generic chat: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_generic')::bigint$$,
    'generic chat: no memory'
);
select throws_ok(
    $$select memory.remember('Lives in Manila', 'fact', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_generic')::bigint)$$,
    '42501', 'memory not allowed: no profile is selected in the conversation',
    'generic chat: remember is refused'
);

-- Closed: the selected profile is not the primary one.
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_other')::bigint, '[{"content": "Lives in Cebu", "type": "fact"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: the selected profile is not the user''s primary profile')$$,
    'profile not primary: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_other')::bigint$$,
    'profile not primary: no memory'
);
select throws_ok(
    $$select memory.remember('Lives in Cebu', 'fact', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_other')::bigint)$$,
    '42501', 'memory not allowed: the selected profile is not the user''s primary profile',
    'profile not primary: remember is refused'
);

-- Closed: the source is the assistant's message.
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_answer')::bigint, '[{"content": "Has a great goal", "type": "goal"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: the user did not write the source message')$$,
    'assistant message: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_answer')::bigint$$,
    'assistant message: no memory'
);
select throws_ok(
    $$select memory.remember('Has a great goal', 'goal', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_answer')::bigint)$$,
    '42501', 'memory not allowed: the user did not write the source message',
    'assistant message: remember is refused'
);

-- Closed: another participant wrote the message (B's message is not A's memory).
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_b_for_a')::bigint, '[{"content": "Paints", "type": "fact"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: the user did not write the source message')$$,
    'another participant''s message: the owner''s extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where user_id = tests.recall('a')::uuid and source_message_id = tests.recall('msg_b_for_a')::bigint$$,
    'another participant''s message: no memory for the owner'
);
select throws_ok(
    $$select memory.remember('Paints', 'fact', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_b_for_a')::bigint)$$,
    '42501', 'memory not allowed: the user did not write the source message',
    'another participant''s message: remember for the owner is refused'
);

-- Closed: a participant who selected no profile of their own does not borrow the owner's.
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_c')::bigint, '[{"content": "Sings", "type": "fact"}]', tests.recall('c')::uuid)$$,
    $$values (null::uuid, 'skipped: no profile is selected in the conversation')$$,
    'participant without a selected profile: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_c')::bigint$$,
    'participant without a selected profile: no memory'
);
select throws_ok(
    $$select memory.remember('Sings', 'fact', tests.recall('c')::uuid, p_source_message_id => tests.recall('msg_c')::bigint)$$,
    '42501', 'memory not allowed: no profile is selected in the conversation',
    'participant without a selected profile: remember is refused'
);

-- Closed: "remember" is off in the conversation.
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_off')::bigint, '[{"content": "Has a cat", "type": "fact"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: remember is off in this conversation')$$,
    'remember off: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_off')::bigint$$,
    'remember off: no memory'
);
select throws_ok(
    $$select memory.remember('Has a cat', 'fact', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_off')::bigint)$$,
    '42501', 'memory not allowed: remember is off in this conversation',
    'remember off: remember is refused'
);

-- Closed: the user paused memory.
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_paused')::bigint, '[{"content": "Has a dog", "type": "fact"}]', tests.recall('p')::uuid)$$,
    $$values (null::uuid, 'skipped: the user has paused memory')$$,
    'memory paused: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_paused')::bigint$$,
    'memory paused: no memory'
);
select throws_ok(
    $$select memory.remember('Has a dog', 'fact', tests.recall('p')::uuid, p_source_message_id => tests.recall('msg_paused')::bigint)$$,
    '42501', 'memory not allowed: the user has paused memory',
    'memory paused: remember is refused'
);

-- Closed: swiss mode, "remember" left at its default.
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_swiss')::bigint, '[{"content": "Wants quick charts", "type": "preference"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: remember is off in this conversation')$$,
    'swiss mode by default: the extraction is skipped'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('msg_swiss')::bigint$$,
    'swiss mode by default: no memory'
);
select throws_ok(
    $$select memory.remember('Wants quick charts', 'preference', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_swiss')::bigint)$$,
    '42501', 'memory not allowed: remember is off in this conversation',
    'swiss mode by default: remember is refused'
);

-- Open: the user's own message, primary profile selected, remember on, not paused.
select results_eq(
    $$select outcome from memory.apply_extraction(
        tests.recall('msg_main')::bigint, '[{"content": "Training for a marathon", "type": "goal"}]', tests.recall('a')::uuid)$$,
    $$values ('added')$$,
    'primary profile: the extraction adds a memory'
);
select results_eq(
    $$select user_id, profile_id, source_conversation_id, turn_index, origin_mode
    from memory.memories where source_message_id = tests.recall('msg_main')::bigint and content = 'Training for a marathon'$$,
    $$values (tests.recall('a')::uuid, tests.recall('pa_main')::uuid, tests.recall('conv_main')::uuid, 1, 'profile')$$,
    'primary profile: the memory takes the user, the primary profile, the conversation, turn and mode'
);
select lives_ok(
    $$select memory.remember('Runs every morning', 'pattern', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_main')::bigint)$$,
    'primary profile: remember is allowed'
);
select results_eq(
    $$select profile_id, source_conversation_id from memory.memories
    where source_message_id = tests.recall('msg_main')::bigint and content = 'Runs every morning'$$,
    $$values (tests.recall('pa_main')::uuid, tests.recall('conv_main')::uuid)$$,
    'primary profile: the remembered memory takes the profile and conversation of its message'
);

-- Open: swiss mode with "remember" toggled on.
select results_eq(
    $$select outcome from memory.apply_extraction(
        tests.recall('msg_swiss_on')::bigint, '[{"content": "Born in Davao", "type": "fact"}]', tests.recall('a')::uuid)$$,
    $$values ('added')$$,
    'swiss mode with remember on: the extraction adds a memory'
);
select results_eq(
    $$select profile_id, origin_mode, turn_index from memory.memories where source_message_id = tests.recall('msg_swiss_on')::bigint$$,
    $$values (tests.recall('pa_main')::uuid, 'swiss', 2)$$,
    'swiss mode with remember on: the memory records the swiss origin and its turn'
);
select lives_ok(
    $$select memory.remember('Likes swiss snapshots', 'preference', tests.recall('a')::uuid, p_source_message_id => tests.recall('msg_swiss_on')::bigint)$$,
    'swiss mode with remember on: remember is allowed'
);

-- Open: together mode, B's own message, B's own primary profile selected in participants.
select lives_ok(
    $$select * from memory.apply_extraction(
        tests.recall('msg_b')::bigint, '[{"content": "B paints watercolours", "type": "fact"}]', tests.recall('b')::uuid)$$,
    'together mode: the extraction for B from B''s own message succeeds'
);
select results_eq(
    $$select user_id, profile_id, source_conversation_id from memory.memories where content = 'B paints watercolours'$$,
    $$values (tests.recall('b')::uuid, tests.recall('pb_main')::uuid, tests.recall('conv_together')::uuid)$$,
    'together mode: B''s memory has B''s user id and B''s profile'
);
select results_eq(
    $$select e.memory_ids = array[m.id] from memory.memory_extractions as e
    join memory.memories as m on m.source_message_id = e.source_message_id
    where e.source_message_id = tests.recall('msg_b')::bigint$$,
    $$values (true)$$,
    'together mode: the ledger records B''s memory'
);
select lives_ok(
    $$select memory.remember('B paints on weekends', 'pattern', tests.recall('b')::uuid, p_source_message_id => tests.recall('msg_b')::bigint)$$,
    'together mode: remember for B from B''s message is allowed'
);
select is_empty(
    $$select id from memory.memories
    where source_message_id = tests.recall('msg_b')::bigint
        and (profile_id is distinct from tests.recall('pb_main')::uuid or user_id <> tests.recall('b')::uuid)$$,
    'together mode: nothing from B''s message lands on the owner''s profile or user'
);

-- Switching the primary profile: old memories stay, new ones go to the new primary.
select memory.set_primary_profile(tests.recall('pa_other')::uuid);
select results_eq(
    $$select profile_id from memory.memories
    where user_id = tests.recall('a')::uuid and content in ('Training for a marathon', 'Born in Davao') order by content$$,
    $$values (tests.recall('pa_main')::uuid), (tests.recall('pa_main')::uuid)$$,
    'after switching, existing memories stay on their original profile'
);
select tests.remember('msg_new', (select user_message_id from memory.add_turn(tests.recall('conv_other')::uuid, 'I switched to cycling', 'Nice.')));
select tests.remember('mem_new', (select memory_id from memory.apply_extraction(
    tests.recall('msg_new')::bigint, '[{"content": "Switched to cycling", "type": "fact"}]', tests.recall('a')::uuid
)));
select results_eq(
    $$select profile_id from memory.memories where id = tests.recall('mem_new')::uuid$$,
    $$values (tests.recall('pa_other')::uuid)$$,
    'after switching, an extraction from a conversation on the new primary goes to the new primary'
);
select tests.remember('msg_old_conv', (select user_message_id from memory.add_turn(tests.recall('conv_main')::uuid, 'I like tea', 'Nice.')));
select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg_old_conv')::bigint, '[{"content": "Likes tea", "type": "preference"}]', tests.recall('a')::uuid)$$,
    $$values (null::uuid, 'skipped: the selected profile is not the user''s primary profile')$$,
    'after switching, a conversation still on the old profile makes no memory'
);
select tests.remember('mem_manual', (select memory_id from memory.remember('Prefers mornings', 'preference', tests.recall('a')::uuid)));
select results_eq(
    $$select profile_id from memory.memories where id = tests.recall('mem_manual')::uuid$$,
    $$values (tests.recall('pa_other')::uuid)$$,
    'after switching, a memory written without a conversation goes to the new primary'
);

select * from finish();
rollback;
