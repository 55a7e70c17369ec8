-- memory.resolve_reference(conversation, text, max_turns): seed 000's "yung una" / "the first
-- one". A phrase from memory.reference_phrases, found as whole words (the longest one wins), picks
-- a turn by position among the turns the prompt shows (the newest max_turns): 1 = the oldest of
-- them, -1 = the latest. No phrase, or a position outside the window, returns no row.
begin;
select plan(28);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-resolve');
select tests.remember('participant', tests.create_auth_user('rpc-resolve.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'References', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
-- Twelve turns: with the default window of 10 the prompt shows turns 3..12.
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 12) as i;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'yung una')$$,
    '42501', null, 'anon cannot resolve references'
);

select tests.authenticate_as(tests.recall('owner')::uuid);

-- Positions count within the turns shown.
select results_eq(
    $$select turn_number, user_content from memory.resolve_reference(tests.recall('conv')::uuid, 'tell me more about yung una')$$,
    $$values (3, 'q3')$$,
    '"yung una" is the first turn shown (turn 3 of 12 with a 10-turn window)'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'What did you mean by the first one?')$$,
    array[3],
    '"the first one" is the first turn shown'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'balikan natin yung pangalawa')$$,
    array[4],
    '"yung pangalawa" is the second turn shown'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'and the second one?')$$,
    array[4],
    '"the second one" is the second turn shown'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'yung sinabi mo kanina')$$,
    array[12],
    '"kanina" is the latest turn'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'what you said earlier')$$,
    array[12],
    '"earlier" is the latest turn'
);
select results_eq(
    $$select turn_number, user_content, assistant_content
    from memory.resolve_reference(tests.recall('conv')::uuid, 'yung una', 3)$$,
    $$values (10, 'q10', 'a10')$$,
    'with max_turns 3 "yung una" is turn 10, returned with its question and answer'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'yung panglima', 3)$$,
    'a position beyond the turns shown returns no row'
);

-- Matching: longest phrase, whole words, any case and spacing.
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'the second to last answer')$$,
    array[11],
    'the longest phrase wins: "second to last" (-2) over "second" (2)'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, E'About   THE\tFIRST  one!')$$,
    array[3],
    'case and runs of whitespace do not matter'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'unahin mo ito')$$,
    '"una" inside another word ("unahin") is not a reference'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'firstly, what is my sign?')$$,
    '"first" inside "firstly" is not a reference'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'what is my rising sign?')$$,
    'a text without a phrase returns no row'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, null)$$,
    'a null text returns no row'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, ' ?! ... ')$$,
    'a text without a letter or digit returns no row'
);
select is_empty(
    $$select * from memory.resolve_reference(gen_random_uuid(), 'yung una')$$,
    'a missing conversation returns no row'
);

-- The phrases are data: a team adds a language by inserting rows.
select tests.clear_authentication();
insert into memory.reference_phrases (phrase, position, language) values ('das erste', 1, 'de'), ('das letzte', -1, 'de');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'Erzähl mir mehr über das erste')$$,
    array[3],
    'a phrase inserted as a new row works ("das erste")'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'und das letzte?')$$,
    array[12],
    'a new negative phrase works too ("das letzte")'
);

-- Callers resolve only in conversations they may read.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'yung una')$$,
    'a stranger resolves nothing in the owner''s conversation'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'yung una')$$,
    array[3],
    'a participant resolves in the shared conversation'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'kanina')$$,
    array[12],
    'tenant A''s admin resolves in the owner''s conversation'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'yung una')$$,
    'tenant B''s admin resolves nothing in tenant A'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select turn_number from memory.resolve_reference(tests.recall('conv')::uuid, 'the first one')$$,
    array[3],
    'service_role resolves in anyone''s conversation'
);
-- The longest input a message may hold is searched whole: the phrase at its very end is found,
-- and runs are words in order (the last word of one sentence and the first of the next count).
select results_eq(
    $$select turn_number from memory.resolve_reference(
        tests.recall('conv')::uuid, repeat('so many words here ', 5000) || 'tell me about the first one')$$,
    array[3],
    'a phrase at the end of a 100,000-character query is found'
);
select results_eq(
    $$select turn_number from memory.resolve_reference(
        tests.recall('conv')::uuid, repeat('nothing to see ', 6000) || 'the second to. Last thing')$$,
    array[11],
    'words run on across punctuation, as before: the longest phrase, second to last, wins over second'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, repeat('firstly ', 12000) || 'one-ish')$$,
    'a long query without a phrase finds nothing'
);
select throws_ok(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'yung una', 0)$$,
    '22023', null, 'max_turns is checked like turn_history''s'
);

select * from finish();
rollback;
