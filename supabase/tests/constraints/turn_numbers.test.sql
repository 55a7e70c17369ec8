-- Turn numbers are positive, unique per conversation and role, and gap-free: the table numbers
-- every message itself. A number a writer supplies must be the next one: one that already exists
-- is 23505, one that would leave a gap is 23514, 0 or negative is 23514. Deleting or clearing
-- messages never makes a number reusable: the count goes on from the highest number handed out.
begin;
select plan(18);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('constraints-turns');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, p_window_turns => 1000)).id);
select memory.add_turn(tests.recall('conv')::uuid, 'q1', 'a1');

-- Out-of-range numbers are a check violation (23514) for every writer: not an RLS error for the
-- owner, not a not-null error for service_role.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q', 0)$$,
    '23514', null, 'turn number 0 is refused'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q', -3)$$,
    '23514', null, 'a negative turn number is refused'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q', 0)$$,
    '23514', null, 'turn number 0 is refused for service_role too'
);

select tests.authenticate_as(tests.recall('owner')::uuid);

-- Out-of-sequence numbers.
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q', 1)$$,
    '23505', 'turn 1 already exists', 'a question for an existing turn is a duplicate'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'assistant', 'a', 1)$$,
    '23505', null, 'a second answer to a complete turn is a duplicate'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q', 5)$$,
    '23514', 'turn 5 would leave a gap', 'a number past the next one would leave a gap'
);
select results_eq(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q2', 2)
    returning turn_number$$,
    array[2],
    'supplying the next number is accepted'
);
select results_eq(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'assistant', 'a2', 2)
    returning turn_number$$,
    array[2],
    'supplying the open turn''s number for its answer is accepted'
);

-- The unique index holds even where the trigger does not run (updates by service_role).
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.messages set turn_number = 1 where conversation_id = tests.recall('conv')::uuid and turn_number = 2 and role = 'user'$$,
    '23505', null, 'two questions can never share a turn'
);

-- Deleting messages leaves a hole in the history, never in the numbering.
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'q3', 'a3');
delete from memory.messages where conversation_id = tests.recall('conv')::uuid and turn_number = 3;
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'q4', 'a4')$$,
    array[4],
    'after deleting the newest turn 3 the next turn is 4, not 3 again'
);
delete from memory.messages where conversation_id = tests.recall('conv')::uuid and turn_number = 2;
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'q5', 'a5')$$,
    array[5],
    'after deleting turn 2 in the middle the next turn is 5'
);
select results_eq(
    $$select distinct turn_number from memory.messages where conversation_id = tests.recall('conv')::uuid order by 1$$,
    array[1, 4, 5],
    'what is left keeps its numbers'
);
select memory.clear_conversation(tests.recall('conv')::uuid);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'q6', 'a6')$$,
    array[6],
    'after clearing the conversation the next turn is 6'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, turn_number) values (tests.recall('conv')::uuid, 'user', 'q', 3)$$,
    '23505', null, 'a number handed out before the deletes cannot be supplied again'
);

-- A failed write takes no number: numbering stays gap-free.
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'q7', '')$$,
    '22023', null, 'a refused turn'
);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('conv')::uuid, 'q7', 'a7')$$,
    array[7],
    'the refused turn took no number: the next one is 7'
);

-- Each conversation counts on its own.
select tests.remember('other', (memory.create_conversation(p_window_turns => 1000)).id);
select results_eq(
    $$select turn_number from memory.add_turn(tests.recall('other')::uuid, 'q', 'a')$$,
    array[1],
    'another conversation starts at turn 1'
);
select tests.clear_authentication();
select results_eq(
    $$select last_turn from memory.conversations where id = tests.recall('conv')::uuid$$,
    array[7],
    'the counter on the conversation matches the highest number handed out'
);

select * from finish();
rollback;
