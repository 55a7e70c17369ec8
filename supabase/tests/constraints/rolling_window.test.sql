-- Rolling window (seed 000: the last 10 turns): a conversation with window_turns = N keeps only its
-- newest N turns; a new turn deletes the one that falls out, on every write path. An answer that
-- completes the open turn deletes nothing.
begin;
select plan(8);

select tests.create_cast('constraints-window');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Seed 000', p_window_turns => 10)).id);

select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 10) as i;
select results_eq(
    $$select count(distinct turn_number)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[10],
    'ten turns fit in a window of ten'
);

-- The eleventh turn pushes turn 1 out.
select memory.add_turn(tests.recall('conv')::uuid, 'q11', 'a11');
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid and turn_number = 1$$,
    'after 11 turns turn 1 is gone (question and answer)'
);
select results_eq(
    $$select distinct turn_number from memory.messages where conversation_id = tests.recall('conv')::uuid order by 1$$,
    array[2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    'turns 2..11 remain'
);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[20],
    'twenty messages: ten complete turns'
);

-- A question opens turn 12 and pushes turn 2 out; its answer deletes nothing more.
insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', 'q12');
select results_eq(
    $$select min(turn_number), max(turn_number) from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    $$values (3, 12)$$,
    'a Data API insert enforces the window too: turns 3..12'
);
select memory.add_message(tests.recall('conv')::uuid, 'assistant', 'a12');
select results_eq(
    $$select min(turn_number), count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    $$values (3, 20)$$,
    'the answer completing turn 12 deleted nothing'
);

-- Many turns later the window still holds exactly the newest ten.
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(13, 40) as i;
select results_eq(
    $$select distinct turn_number from memory.messages where conversation_id = tests.recall('conv')::uuid order by 1$$,
    array[31, 32, 33, 34, 35, 36, 37, 38, 39, 40],
    'after 40 turns: turns 31..40'
);

-- A conversation with a larger window keeps all its turns.
select tests.remember('unbounded', (memory.create_conversation(p_window_turns => 1000)).id);
select memory.add_turn(tests.recall('unbounded')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 15) as i;
select results_eq(
    $$select count(distinct turn_number)::integer from memory.messages where conversation_id = tests.recall('unbounded')::uuid$$,
    array[15],
    'a larger window keeps all 15 turns'
);

select * from finish();
rollback;
