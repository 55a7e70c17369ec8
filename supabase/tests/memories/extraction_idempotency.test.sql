-- memory.apply_extraction is idempotent per source message (seed 004: a retried extraction must not
-- add memories twice): the second application returns 'already extracted' with the first run's
-- memory ids and changes nothing. It takes a JSON array of at most 3 items (else 22023), and a user
-- gets at most extraction_rate_limit (60) extractions per minute (else 54000); older ledger rows do
-- not count.
begin;
select plan(18);

select tests.remember('u', memory.user_id_for('memories-extraction.u'));
select tests.remember('w', memory.user_id_for('memories-extraction.w'));
select tests.remember('x', memory.user_id_for('memories-extraction.x'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'U main', true) returning id)
select tests.remember('pu', id) from p;
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('w')::uuid, 'W main', true), (tests.recall('x')::uuid, 'X main', true);
select tests.remember('conv', (memory.create_conversation(
    tests.recall('u')::uuid, 'Extraction', 'profile', tests.recall('pu')::uuid, p_window_turns => 1000
)).id);
select tests.remember('msg1', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'I run and I cook', 'Nice.')));
select tests.remember('msg2', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'Many things', 'Ok.')));
select tests.remember('msg3', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'Three things', 'Ok.')));

select tests.authenticate_as_service_role();

-- The first application adds; the ledger records what it gave.
select results_eq(
    $$select outcome from memory.apply_extraction(
        tests.recall('msg1')::bigint,
        '[{"content": "Runs on weekdays", "type": "pattern", "confidence": 0.9},
          {"content": "Cooks Filipino food", "type": "fact", "category": "food"}]',
        tests.recall('u')::uuid)$$,
    $$values ('added'), ('added')$$,
    'the first extraction of a message adds its memories'
);
select tests.remember('ids', (select memory_ids from memory.memory_extractions where source_message_id = tests.recall('msg1')::bigint));
select results_eq(
    $$select array(select unnest(tests.recall('ids')::uuid[]) as i order by i)$$,
    $$select array(select id from memory.memories where source_message_id = tests.recall('msg1')::bigint order by id)$$,
    'the ledger holds the ids of the memories the extraction added'
);

-- What the second application must not change.
select tests.remember('memories_before', (select count(*) from memory.memories where user_id = tests.recall('u')::uuid));
select tests.remember('references_before', (select sum(reference_count) from memory.memories where user_id = tests.recall('u')::uuid));
select tests.remember('events_before', (select count(*) from memory.memory_events where user_id = tests.recall('u')::uuid));

select results_eq(
    $$select memory_id, outcome from memory.apply_extraction(
        tests.recall('msg1')::bigint,
        '[{"content": "Runs on weekdays", "type": "pattern"}, {"content": "Something new", "type": "fact"}]',
        tests.recall('u')::uuid)$$,
    $$select i, 'already extracted' from unnest(tests.recall('ids')::uuid[]) as i$$,
    'a second extraction of the same message returns the first run''s ids as already extracted'
);
select is(
    (select count(*) from memory.memories where user_id = tests.recall('u')::uuid)::text,
    tests.recall('memories_before'),
    'the second extraction added no memory'
);
select is(
    (select sum(reference_count) from memory.memories where user_id = tests.recall('u')::uuid)::text,
    tests.recall('references_before'),
    'the second extraction referenced nothing'
);
select is(
    (select count(*) from memory.memory_events where user_id = tests.recall('u')::uuid)::text,
    tests.recall('events_before'),
    'the second extraction wrote no history'
);
select results_eq(
    $$select count(*)::integer, min(memory_ids::text) from memory.memory_extractions where source_message_id = tests.recall('msg1')::bigint$$,
    $$values (1, tests.recall('ids'))$$,
    'the ledger still has one row for the message, with the same ids'
);

-- The payload: a JSON array of at most three items.
select throws_ok(
    $$select * from memory.apply_extraction(tests.recall('msg2')::bigint,
        '[{"content": "a1", "type": "fact"}, {"content": "b2", "type": "fact"},
          {"content": "c3", "type": "fact"}, {"content": "d4", "type": "fact"}]',
        tests.recall('u')::uuid)$$,
    '22023', 'memories must be a JSON array of at most 3 items',
    'more than 3 items are refused'
);
select throws_ok(
    $$select * from memory.apply_extraction(tests.recall('msg2')::bigint, '{"content": "a1", "type": "fact"}', tests.recall('u')::uuid)$$,
    '22023', 'memories must be a JSON array of at most 3 items',
    'an object instead of an array is refused'
);
select throws_ok(
    $$select * from memory.apply_extraction(tests.recall('msg2')::bigint, '"Runs daily"', tests.recall('u')::uuid)$$,
    '22023', 'memories must be a JSON array of at most 3 items',
    'a scalar instead of an array is refused'
);
select is_empty(
    $$select source_message_id from memory.memory_extractions where source_message_id = tests.recall('msg2')::bigint
    union all select source_message_id from memory.memories where source_message_id = tests.recall('msg2')::bigint$$,
    'a refused payload leaves neither a ledger row nor a memory'
);
select results_eq(
    $$select outcome from memory.apply_extraction(tests.recall('msg3')::bigint,
        '[{"content": "Plays chess online", "type": "fact"}, {"content": "Wants to learn Spanish", "type": "goal"},
          {"content": "Visits Baguio every summer", "type": "pattern"}]',
        tests.recall('u')::uuid)$$,
    $$values ('added'), ('added'), ('added')$$,
    'exactly 3 items are accepted'
);

-- Rate limit: 60 extractions per user per minute. W already has 60 in the ledger.
select tests.clear_authentication();
select tests.remember('conv_w', (memory.create_conversation(
    tests.recall('w')::uuid, 'Busy', 'profile', (select id from memory.profiles where user_id = tests.recall('w')::uuid), p_window_turns => 1000
)).id);
select count(*) from (select memory.add_turn(tests.recall('conv_w')::uuid, 'Question ' || i, 'Answer ' || i) from generate_series(1, 62) as i) as t;
insert into memory.memory_extractions (source_message_id, user_id, created_at)
select m.id, tests.recall('w')::uuid, now()
from memory.messages as m
where m.conversation_id = tests.recall('conv_w')::uuid and m.role = 'user' and m.turn_number <= 60;
select tests.remember('msg_w1', (select id from memory.messages where conversation_id = tests.recall('conv_w')::uuid and role = 'user' and turn_number = 1));
select tests.remember('msg_w61', (select id from memory.messages where conversation_id = tests.recall('conv_w')::uuid and role = 'user' and turn_number = 61));
select tests.remember('msg_w62', (select id from memory.messages where conversation_id = tests.recall('conv_w')::uuid and role = 'user' and turn_number = 62));
select tests.remember('conv_x', (memory.create_conversation(
    tests.recall('x')::uuid, 'Calm', 'profile', (select id from memory.profiles where user_id = tests.recall('x')::uuid)
)).id);
select tests.remember('msg_x', (select user_message_id from memory.add_turn(tests.recall('conv_x')::uuid, 'I swim', 'Nice.')));

select tests.authenticate_as_service_role();
select throws_ok(
    $$select * from memory.apply_extraction(tests.recall('msg_w61')::bigint, '[{"content": "Reads at night", "type": "pattern"}]', tests.recall('w')::uuid)$$,
    '54000', 'rate limit: 60 extractions per user per minute',
    'the 61st extraction within a minute is refused'
);
select is_empty(
    $$select source_message_id from memory.memory_extractions where source_message_id = tests.recall('msg_w61')::bigint$$,
    'the refused extraction left no ledger row'
);
select lives_ok(
    $$select * from memory.apply_extraction(tests.recall('msg_w1')::bigint, '[{"content": "Reads at night", "type": "pattern"}]', tests.recall('w')::uuid)$$,
    'a retry of an already extracted message is answered (already extracted) even at the limit: it is not a new extraction'
);
select results_eq(
    $$select outcome from memory.apply_extraction(tests.recall('msg_x')::bigint, '[{"content": "Swims", "type": "fact"}]', tests.recall('x')::uuid)$$,
    $$values ('added')$$,
    'the limit is per user: another user extracts meanwhile'
);

-- A ledger row from an hour ago does not count: 59 recent, so the next one is the 60th.
select tests.clear_authentication();
update memory.memory_extractions set created_at = now() - interval '1 hour'
where source_message_id = (select min(source_message_id) from memory.memory_extractions where user_id = tests.recall('w')::uuid);
select tests.authenticate_as_service_role();
select results_eq(
    $$select outcome from memory.apply_extraction(tests.recall('msg_w61')::bigint, '[{"content": "Reads at night", "type": "pattern"}]', tests.recall('w')::uuid)$$,
    $$values ('added')$$,
    'with one ledger row an hour old, the 60th extraction within the minute is allowed'
);
select throws_ok(
    $$select * from memory.apply_extraction(tests.recall('msg_w62')::bigint, '[{"content": "Drinks coffee", "type": "fact"}]', tests.recall('w')::uuid)$$,
    '54000', 'rate limit: 60 extractions per user per minute',
    'and the next one is the 61st again'
);

select * from finish();
rollback;
