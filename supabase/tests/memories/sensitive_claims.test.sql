-- Medical and financial claims drawn from a conversation keep at most the
-- sensitive_confidence_max confidence (0.3), whatever the model said and on every write path;
-- other categories, and claims the user states outright (no source message), keep theirs.
begin;
select plan(7);

select tests.authenticate_as_service_role();
select tests.remember('u', memory.user_id_for('memories-sensitive.u'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Main', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('c', (memory.create_conversation(tests.recall('u')::uuid, null, 'profile', tests.recall('p')::uuid)).id);
select tests.remember('q1', (select user_message_id from memory.add_turn(tests.recall('c')::uuid, 'I take insulin for my diabetes', 'Noted.')));
select tests.remember('q2', (select user_message_id from memory.add_turn(tests.recall('c')::uuid, 'I owe 20k on my card', 'Noted.')));
select tests.remember('q3', (select user_message_id from memory.add_turn(tests.recall('c')::uuid, 'I play the cello', 'Nice.')));

select tests.remember('m1', (select memory_id from memory.remember('Takes insulin for diabetes', 'fact', tests.recall('u')::uuid,
        p_category => 'health', p_confidence => 0.9, p_source_message_id => tests.recall('q1')::bigint)));
select is(
    (select confidence from memory.memories where id = tests.recall('m1')::uuid),
    0.3, 'a medical claim from a conversation is kept with confidence 0.3'
);
select tests.remember('m2', (select memory_id from memory.remember('Owes 20k on a credit card', 'fact', tests.recall('u')::uuid,
        p_category => 'Finance', p_confidence => 0.95, p_source_message_id => tests.recall('q2')::bigint)));
select is(
    (select confidence from memory.memories where id = tests.recall('m2')::uuid),
    0.3, 'a financial claim too, whatever the case of the category'
);
select tests.remember('m3', (select memory_id from memory.remember('Plays the cello', 'fact', tests.recall('u')::uuid,
        p_category => 'hobbies', p_confidence => 0.9, p_source_message_id => tests.recall('q3')::bigint)));
select is(
    (select confidence from memory.memories where id = tests.recall('m3')::uuid),
    0.9, 'other categories keep their confidence'
);
select tests.remember('m4', (select memory_id from memory.remember('Is allergic to penicillin', 'fact', tests.recall('u')::uuid,
        p_category => 'health', p_confidence => 0.9)));
select is(
    (select confidence from memory.memories where id = tests.recall('m4')::uuid),
    0.9, 'a claim the user states outright keeps its confidence'
);

-- Dedup's "keep the higher confidence" and a direct update are capped too.
select is(
    (select r.outcome from memory.remember('Takes insulin for diabetes', 'fact', tests.recall('u')::uuid,
        p_category => 'health', p_confidence => 1.0, p_source_message_id => tests.recall('q1')::bigint) as r),
    'duplicate', 'the same claim again is a duplicate'
);
select is(
    (select confidence from memory.memories where content = 'Takes insulin for diabetes' and user_id = tests.recall('u')::uuid),
    0.3, 'and its confidence stays capped'
);
select tests.clear_authentication();
update memory.memories set confidence = 0.99 where content = 'Owes 20k on a credit card' and user_id = tests.recall('u')::uuid;
select is(
    (select confidence from memory.memories where content = 'Owes 20k on a credit card' and user_id = tests.recall('u')::uuid),
    0.3, 'a direct update is capped as well'
);

select * from finish();
rollback;
