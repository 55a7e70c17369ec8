-- memory.prompt_context(conversation, query, max_turns, ...): everything a prompt needs in one round
-- trip: the newest max_turns turns oldest-first ("history") and the turn the query points at
-- ("referenced_turn", null when it points nowhere). Callers get only what they may read.
begin;
select plan(21);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-prompt-context');
select tests.remember('participant', tests.create_auth_user('rpc-prompt-context.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Prompt', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 12) as i;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.prompt_context(tests.recall('conv')::uuid)$$, '42501', null, 'anon cannot build a prompt context');

-- The owner gets the window of turns and the referenced turn.
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('ctx', memory.prompt_context(tests.recall('conv')::uuid, 'ano yung una?'));
select is(
    tests.recall('ctx')::jsonb ->> 'conversation_id', tests.recall('conv'),
    'the context names its conversation'
);
select is(
    array(select k from json_object_keys(tests.recall('ctx')::json) as k order by k),
    array['conversation_id', 'conversation_summary', 'history', 'memories', 'monthly_summary', 'referenced_turn',
        'weekly_summary'],
    'the context is one json document of seven parts'
);
select is(
    array(select (h ->> 'turn_number')::integer from jsonb_array_elements(tests.recall('ctx')::jsonb -> 'history') as h),
    array[3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    'history holds the newest 10 turns, oldest first'
);
select is(
    tests.recall('ctx')::jsonb -> 'history' -> 0 ->> 'user_content' || ' / ' || (tests.recall('ctx')::jsonb -> 'history' -> 0 ->> 'assistant_content'),
    'q3 / a3',
    'each history entry carries the question and the answer'
);
select is(
    (tests.recall('ctx')::jsonb -> 'referenced_turn' ->> 'turn_number')::integer, 3,
    '"yung una" in the query references the first turn shown'
);
select is(
    memory.prompt_context(tests.recall('conv')::uuid, 'what is my sign?')::jsonb -> 'referenced_turn',
    'null'::jsonb,
    'a query without a reference has a null referenced_turn'
);
select is(
    memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'referenced_turn',
    'null'::jsonb,
    'no query, no referenced turn'
);
select tests.remember('short', memory.prompt_context(tests.recall('conv')::uuid, 'the first one', 2));
select is(
    array(select (h ->> 'turn_number')::integer from jsonb_array_elements(tests.recall('short')::jsonb -> 'history') as h),
    array[11, 12],
    'max_turns 2: the last two turns'
);
select is(
    (tests.recall('short')::jsonb -> 'referenced_turn' ->> 'turn_number')::integer, 11,
    'with max_turns 2 "the first one" is turn 11'
);
select throws_ok(
    $$select memory.prompt_context(tests.recall('conv')::uuid, null, 0)$$,
    '22023', null, 'max_turns 0 is refused'
);

-- Others get what RLS lets them read.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(
    (select jsonb_build_object('history', c -> 'history', 'referenced_turn', c -> 'referenced_turn')
    from memory.prompt_context(tests.recall('conv')::uuid, 'yung una') as c),
    jsonb_build_object('history', '[]'::jsonb, 'referenced_turn', null),
    'a stranger gets no history and no referenced turn'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select is(
    jsonb_array_length(memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'history'), 10,
    'a participant gets the shared history'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(
    jsonb_array_length(memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'history'), 10,
    'tenant A''s admin gets the owner''s history'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(
    memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'history', '[]'::jsonb,
    'tenant B''s admin gets no history of tenant A'
);
select tests.authenticate_as_service_role();
select is(
    (memory.prompt_context(tests.recall('conv')::uuid, 'kanina')::jsonb -> 'referenced_turn' ->> 'turn_number')::integer, 12,
    'service_role builds the owner''s context'
);

-- Together mode: each prompt holds its reader's own memories, of the profile they chose for the
-- conversation (the gate's rule), never the other's.
select tests.clear_authentication();
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('owner')::uuid, 'Owner main', true), (tests.recall('participant')::uuid, 'Guest main', true);
update memory.conversations set profile_id = (select id from memory.profiles where user_id = tests.recall('owner')::uuid)
where id = tests.recall('conv')::uuid;
select tests.authenticate_as_service_role();
select memory.remember('Owns a sailing boat', 'fact', tests.recall('owner')::uuid);
select memory.remember('Plays the violin', 'fact', tests.recall('participant')::uuid);
select tests.authenticate_as(tests.recall('participant')::uuid);
select is(
    memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'memories', '[]'::jsonb,
    'a participant who chose no profile gets no memories, and never the owner''s'
);
update memory.participants set profile_id = (select id from memory.profiles where user_id = tests.recall('participant')::uuid)
where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('participant')::uuid;
select is(
    array(select m ->> 'content' from jsonb_array_elements(memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'memories') as m),
    array['Plays the violin'],
    'a participant on their Main Profile gets their own memories'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    array(select m ->> 'content' from jsonb_array_elements(memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'memories') as m),
    array['Owns a sailing boat'],
    'the owner gets theirs'
);
select tests.authenticate_as_service_role();
select is(
    array(select m ->> 'content' from jsonb_array_elements(memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'memories') as m),
    array['Owns a sailing boat'],
    'service_role builds the owner''s prompt'
);

-- Expired turns never reach a prompt, before any sweep.
select tests.clear_authentication();
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('conv')::uuid and turn_number >= 11;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    array(select (h ->> 'turn_number')::integer
    from jsonb_array_elements(memory.prompt_context(tests.recall('conv')::uuid, null, 3)::jsonb -> 'history') as h),
    array[10],
    'expired turns 11 and 12 are left out of the prompt'
);

select * from finish();
rollback;
