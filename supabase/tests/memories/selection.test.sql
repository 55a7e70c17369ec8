-- memory.select_memories (seed 004's selection): the live memories of one user and profile,
-- pinned first, then by score = type weight x confidence x 1 / (1 + min(days since last
-- reference, 30)) + 0.1 x reference count; at most 10 by default, p_limit and a cumulative token
-- budget. Choosing is a read; p_record records the use (last_referenced_at, reference_count + 1),
-- and p_message_id stores the ids on that assistant message and records them. memory.prompt_context
-- carries memories only for a conversation on its owner's primary profile with "remember" on, and
-- records nothing: storing the answer with p_used_memory_ids does; memory.mark_memories_used
-- records a use after the fact.
begin;
select plan(26);

select tests.create_cast('memories-selection');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Work', false) returning id)
select tests.remember('q', id) from p;
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger', true);
select tests.remember('v', memory.user_id_for('memories-selection.v'));
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('v')::uuid, 'V', true);

-- The owner's live memories, with the score each must get (now() is the transaction's instant):
insert into memory.memories (user_id, content, type, confidence, last_referenced_at, reference_count, pinned)
values
-- pinned fact 0.1, 30 days:   1.0 x 0.1 / 31            = 0.0032 (but pinned: first)
(tests.recall('owner')::uuid, 'Allergic to penicillin', 'fact', 0.1, now() - interval '30 days', 0, true),
-- goal 0.9, 2 days, 3 refs:  1.5 x 0.9 / 3 + 0.3       = 0.7500
(tests.recall('owner')::uuid, 'Wants to run a marathon', 'goal', 0.9, now() - interval '2 days', 3, false),
-- fact 0.8, 40 days (cap 30): 1.0 x 0.8 / 31           = 0.0258
(tests.recall('owner')::uuid, 'Owns a blue car', 'fact', 0.8, now() - interval '40 days', 0, false),
-- emotion 1.0, 12 hours:     0.8 x 1.0 / 1.5           = 0.5333
(tests.recall('owner')::uuid, 'Felt anxious about work', 'emotion', 1.0, now() - interval '12 hours', 0, false),
-- relationship 0.5, 1 day, 1 ref: 1.3 x 0.5 / 2 + 0.1  = 0.4250
(tests.recall('owner')::uuid, 'Sister Ana is a nurse', 'relationship', 0.5, now() - interval '1 day', 1, false);
-- pattern 0.6, never referenced (recency from created_at = now): 1.5 x 0.6 = 0.9000
insert into memory.memories (user_id, content, type, confidence) values
(tests.recall('owner')::uuid, 'Journals every night', 'pattern', 0.6);

-- Memories that must never be selected, each scored high enough to win if it were.
insert into memory.memories (user_id, profile_id, content, type, confidence, archived, deleted_at, active, expires_at) values
(tests.recall('owner')::uuid, null, 'Excluded: archived', 'goal', 1.0, true, null, true, null),
(tests.recall('owner')::uuid, null, 'Excluded: deleted', 'goal', 1.0, false, now(), false, null),
(tests.recall('owner')::uuid, null, 'Excluded: expired', 'goal', 1.0, false, null, true, now() - interval '1 minute'),
(tests.recall('owner')::uuid, tests.recall('q')::uuid, 'Excluded: other profile', 'goal', 1.0, false, null, true, null),
(tests.recall('stranger')::uuid, null, 'Excluded: other user', 'goal', 1.0, false, null, true, null);
insert into memory.memories (user_id, content, type, confidence, active, superseded_by)
select tests.recall('owner')::uuid, 'Excluded: superseded', 'goal', 1.0, false, id
from memory.memories where content = 'Journals every night' and user_id = tests.recall('owner')::uuid;

-- V has twelve memories of 7 tokens each (20 characters / 4 + 2), scored 0.12 down to 0.01.
insert into memory.memories (user_id, content, type, confidence)
select tests.recall('v')::uuid, format('Filler memory %s xx', lpad(i::text, 2, '0')), 'fact', i / 100.0
from generate_series(1, 12) as i;

-- Conversations for prompt_context and messages for the used memory ids.
select tests.remember('conv_main', (memory.create_conversation(tests.recall('owner')::uuid, 'Main', 'profile', tests.recall('p')::uuid)).id);
select tests.remember('conv_generic', (memory.create_conversation(tests.recall('owner')::uuid, 'Generic', 'chat')).id);
select tests.remember('conv_other', (memory.create_conversation(tests.recall('owner')::uuid, 'Work', 'chat', tests.recall('q')::uuid)).id);
select tests.remember('conv_off', (memory.create_conversation(tests.recall('owner')::uuid, 'Off', 'chat', tests.recall('p')::uuid, false)).id);
with t as (select * from memory.add_turn(tests.recall('conv_main')::uuid, 'How should I train?', 'Slowly.'))
select tests.remember('question', t.user_message_id), tests.remember('answer', t.assistant_message_id) from t;
select tests.remember('answer2', (select assistant_message_id from memory.add_turn(tests.recall('conv_main')::uuid, 'And my car?', 'Blue.')));

select tests.authenticate_as_service_role();

-- Order, scores and the live set (a preview: nothing recorded).
select results_eq(
    $$select content, score, pinned from memory.select_memories(tests.recall('owner')::uuid, p_record => false)$$,
    $$values ('Allergic to penicillin', 0.0032, true), ('Journals every night', 0.9000, false),
        ('Wants to run a marathon', 0.7500, false), ('Felt anxious about work', 0.5333, false),
        ('Sister Ana is a nurse', 0.4250, false), ('Owns a blue car', 0.0258, false)$$,
    'pinned first, then by score; only live memories of that user and profile'
);
select results_eq(
    $$select tokens from memory.select_memories(tests.recall('owner')::uuid, p_limit => 1, p_record => false)$$,
    $$values (ceil(length('Allergic to penicillin') / 4.0)::integer + 2)$$,
    'each memory costs its length / 4 tokens (rounded up) plus 2'
);
select results_eq(
    $$select count(*)::integer, sum(reference_count)::integer, count(*) filter (where last_referenced_at = now())::integer
    from memory.memories where user_id = tests.recall('owner')::uuid$$,
    $$values (11, 4, 0)$$,
    'a preview (p_record false) records nothing'
);
select results_eq(
    $$select content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('q')::uuid, p_record => false)$$,
    $$values ('Excluded: other profile')$$,
    'p_profile_id selects another profile''s memories'
);

-- Recording: p_limit and the counters.
select results_eq(
    $$select content from memory.select_memories(tests.recall('owner')::uuid, p_limit => 2, p_record => true)$$,
    $$values ('Allergic to penicillin'), ('Journals every night')$$,
    'p_limit caps the selection'
);
select results_eq(
    $$select content, reference_count, last_referenced_at = now() from memory.memories
    where user_id = tests.recall('owner')::uuid and content in ('Allergic to penicillin', 'Journals every night', 'Wants to run a marathon')
    order by content$$,
    $$values ('Allergic to penicillin', 1, true), ('Journals every night', 1, true), ('Wants to run a marathon', 3, false)$$,
    'the selected memories are referenced once more and now; the others are untouched'
);
select results_eq(
    $$select event, count(*)::integer from memory.memory_events
    where user_id = tests.recall('owner')::uuid and event = 'reference' group by event$$,
    $$values ('reference', 2)$$,
    'the selection is in the history, one reference event per memory'
);

-- p_message_id: the ids go on the assistant message, in selection order.
select tests.remember('chosen', (select array_agg(id) from memory.select_memories(
    tests.recall('owner')::uuid, p_limit => 3, p_message_id => tests.recall('answer')::bigint
)));
select results_eq(
    $$select used_memory_ids from memory.messages where id = tests.recall('answer')::bigint$$,
    $$select array(select id from memory.memories where user_id = tests.recall('owner')::uuid
        and content in ('Allergic to penicillin', 'Journals every night', 'Wants to run a marathon')
        order by array_position(array['Allergic to penicillin', 'Journals every night', 'Wants to run a marathon'], content))$$,
    'p_message_id stores the chosen ids on the assistant message, in order'
);
select select_memories from memory.select_memories(tests.recall('owner')::uuid, p_limit => 1, p_message_id => tests.recall('question')::bigint);
select results_eq(
    $$select used_memory_ids from memory.messages where id = tests.recall('question')::bigint$$,
    $$values ('{}'::uuid[])$$,
    'a user message does not take memory ids'
);

-- The limit of 10 and the cumulative token budget.
select results_eq(
    $$select count(*)::integer, min(content), max(content) from memory.select_memories(tests.recall('v')::uuid, p_record => false)$$,
    $$values (10, 'Filler memory 03 xx', 'Filler memory 12 xx')$$,
    'at most 10 memories by default, the 10 best'
);
select results_eq(
    $$select content, tokens from memory.select_memories(tests.recall('v')::uuid, p_token_budget => 21, p_record => false)$$,
    $$values ('Filler memory 12 xx', 7), ('Filler memory 11 xx', 7), ('Filler memory 10 xx', 7)$$,
    'a budget of 21 tokens fits three memories of 7'
);
select results_eq(
    $$select count(*)::integer from memory.select_memories(tests.recall('v')::uuid, p_token_budget => 20, p_record => false)$$,
    array[2],
    'a budget of 20 tokens fits two: the cumulative cost of the third (21) is over'
);
select results_eq(
    $$select count(*)::integer from memory.select_memories(tests.recall('v')::uuid, p_limit => 50, p_token_budget => 1000, p_record => false)$$,
    array[12],
    'p_limit above 10 and a large budget return every live memory'
);
select throws_ok(
    $$select * from memory.select_memories(tests.recall('v')::uuid, p_limit => 51)$$,
    '22023', 'limit must be 1..50 and the token budget positive',
    'a limit over 50 is refused'
);

-- Signed in: the owner selects their own; a stranger gets nothing and marks nothing.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select count(*)::integer from memory.select_memories(p_record => false)$$,
    array[6],
    'the signed-in owner selects their own primary profile''s memories'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid)$$,
    'a stranger selects none of the owner''s memories'
);
select tests.clear_authentication();
select tests.remember('chosen_refs', (select sum(reference_count) from memory.memories where id = any(tests.recall('chosen')::uuid[])));
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(format('select memory.mark_memories_used(%s, %L)', tests.recall('answer2'), tests.recall('chosen')),
    'P0002', null, 'a stranger''s mark_memories_used finds no answer of theirs');
select tests.authenticate_as_service_role();
select throws_ok(
    format('select memory.mark_memories_used(%s, %L, %L)', tests.recall('answer2'), tests.recall('chosen'), tests.recall('stranger')),
    'P0002', null, 'nor does the service role acting for the stranger'
);
select results_eq(
    $$select (select used_memory_ids from memory.messages where id = tests.recall('answer2')::bigint),
        (select sum(reference_count)::integer from memory.memories where id = any(tests.recall('chosen')::uuid[]))$$,
    $$values ('{}'::uuid[], tests.recall('chosen_refs')::integer)$$,
    'their calls changed neither the message nor the counters'
);

-- mark_memories_used as service_role.
select memory.mark_memories_used(
    tests.recall('answer2')::bigint,
    array[(select id from memory.memories where content = 'Owns a blue car' and user_id = tests.recall('owner')::uuid)]
);
select results_eq(
    $$select m.reference_count, m.last_referenced_at = now(), msg.used_memory_ids = array[m.id]
    from memory.memories as m, memory.messages as msg
    where m.content = 'Owns a blue car' and m.user_id = tests.recall('owner')::uuid and msg.id = tests.recall('answer2')::bigint$$,
    $$values (1, true, true)$$,
    'mark_memories_used references the memories and puts their ids on the answer'
);

-- prompt_context: memories only on the owner's primary profile with remember on.
select results_eq(
    $$select array(select m ->> 'content' from jsonb_array_elements(memory.prompt_context(tests.recall('conv_main')::uuid)::jsonb -> 'memories') as m)$$,
    $$values (array['Allergic to penicillin', 'Wants to run a marathon', 'Journals every night', 'Owns a blue car',
        'Felt anxious about work', 'Sister Ana is a nurse'])$$,
    'prompt_context carries the selected memories for a conversation on the primary profile (recorded uses lift their scores)'
);
select results_eq(
    $$select reference_count from memory.memories where content = 'Felt anxious about work' and user_id = tests.recall('owner')::uuid$$,
    array[0],
    'prompt_context only reads'
);
select memory.add_turn(
    tests.recall('conv_main')::uuid, 'How do I calm down?', 'Try a breathing exercise.',
    p_used_memory_ids => array(select id from memory.memories where content = 'Felt anxious about work' and user_id = tests.recall('owner')::uuid)
);
select results_eq(
    $$select reference_count from memory.memories where content = 'Felt anxious about work' and user_id = tests.recall('owner')::uuid$$,
    array[1],
    'storing the answer with the memory ids it used records the use'
);
select is(
    memory.prompt_context(tests.recall('conv_generic')::uuid)::jsonb -> 'memories', '[]'::jsonb,
    'no memories for a conversation without a profile'
);
select is(
    memory.prompt_context(tests.recall('conv_other')::uuid)::jsonb -> 'memories', '[]'::jsonb,
    'no memories for a conversation on a profile that is not primary'
);
select is(
    memory.prompt_context(tests.recall('conv_off')::uuid)::jsonb -> 'memories', '[]'::jsonb,
    'no memories for a conversation with remember off'
);

select * from finish();
rollback;
