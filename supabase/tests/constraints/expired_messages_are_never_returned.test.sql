-- TTL: a message whose expires_at has passed is never returned, before any sweep deletes it: not by
-- history, turn_history, count_messages, prompt_context, the turns view, nor a Data API select as
-- a signed-in user (the owner or the owner's tenant admin). An expired conversation is hidden too.
begin;
select plan(13);

select tests.create_cast('constraints-ttl');
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Seed 001', p_ttl => interval '24 hours', p_window_turns => 1000)).id
);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 4) as i;

-- A message written to a conversation with a TTL expires that long after it is written, and
-- every write moves the conversation's own expiry.
select results_eq(
    $$select count(*)::integer from memory.messages
    where conversation_id = tests.recall('conv')::uuid and expires_at = now() + interval '24 hours'$$,
    array[8],
    'each message expires 24 hours after it was written'
);
select results_eq(
    $$select expires_at from memory.conversations where id = tests.recall('conv')::uuid$$,
    $$values (now() + interval '24 hours')$$,
    'the conversation expires 24 hours after its last message'
);

-- Let turns 1 and 2 expire, as if a day had passed for them.
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('conv')::uuid and turn_number <= 2;

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid)$$,
    array['q3', 'a3', 'q4', 'a4'],
    'history leaves out expired messages'
);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 10, 0, true)$$,
    array['a4', 'q4', 'a3', 'q3'],
    'newest-first history leaves them out too'
);
select results_eq(
    $$select turn_number from memory.turn_history(tests.recall('conv')::uuid)$$,
    array[3, 4],
    'turn_history leaves out expired turns'
);
select is(memory.count_messages(tests.recall('conv')::uuid), 4::bigint, 'count_messages does not count expired messages');
select is(
    array(select (h ->> 'turn_number')::integer
    from jsonb_array_elements(memory.prompt_context(tests.recall('conv')::uuid)::jsonb -> 'history') as h),
    array[3, 4],
    'prompt_context leaves out expired turns'
);
select is_empty(
    $$select * from memory.resolve_reference(tests.recall('conv')::uuid, 'the third one')$$,
    'resolve_reference cannot point at an expired turn (only two turns are shown)'
);
select results_eq(
    $$select turn_number from memory.turns where conversation_id = tests.recall('conv')::uuid order by 1$$,
    array[3, 4],
    'the turns view leaves out expired turns'
);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[4],
    'a Data API select as the owner does not return expired messages'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[4],
    'a Data API select as the tenant admin does not return them either'
);

-- The rows are still there until the sweep: only reads hide them.
select tests.clear_authentication();
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[8],
    'the expired messages still exist (the sweep deletes them later)'
);

-- An expired conversation is hidden from its owner.
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('conv')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is_empty(
    $$select id from memory.conversations where id = tests.recall('conv')::uuid$$,
    'an expired conversation is hidden from its owner'
);

select * from finish();
rollback;
