-- memory.sweep_expired(batch_size, user, resume): the retention sweep. It deletes expired messages,
-- conversations and short-term state, at most batch_size rows of each per call, never a live row,
-- and with p_user_id only that user's rows (seed 000's cleanup_old_turns). It is a service
-- function: anon, signed-in users and tenant admins cannot call it.
begin;
select plan(17);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
-- Every call below names a user, so rows of other tests in the same database are never touched.
select tests.create_cast('rpc-sweep');
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'TTL', p_ttl => interval '1 hour', p_window_turns => 1000)).id
);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 3) as i;
select tests.remember(
    'old_conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Old', p_ttl => interval '1 hour', p_window_turns => 1000)).id
);
select tests.remember(
    'stranger_conv',
    (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_ttl => interval '1 hour', p_window_turns => 1000)).id
);
select memory.add_turn(tests.recall('stranger_conv')::uuid, 'q', 'a');
select memory.short_term_set(format('expired %s', i), '1', interval '5 minutes', tests.recall('owner')::uuid) from generate_series(1, 3) as i;
select memory.short_term_set('live', '1', interval '5 minutes', tests.recall('owner')::uuid);
select memory.short_term_set('expired', '1', interval '5 minutes', tests.recall('stranger')::uuid);
-- Expire, as if time had passed: the owner's turns 1 and 2 (4 messages), the old conversation,
-- three of the owner's short-term values, and everything of the stranger's.
update memory.messages set expires_at = now() - interval '1 second'
where (conversation_id = tests.recall('conv')::uuid and turn_number <= 2) or conversation_id = tests.recall('stranger_conv')::uuid;
update memory.conversations set expires_at = now() - interval '1 second'
where id in (tests.recall('old_conv')::uuid, tests.recall('stranger_conv')::uuid);
update memory.short_term_state set expires_at = now() - interval '1 second'
where (user_id = tests.recall('owner')::uuid and key like 'expired %') or user_id = tests.recall('stranger')::uuid;

-- Only service_role sweeps.
select tests.authenticate_as_anon();
select throws_ok($$select * from memory.sweep_expired(10, tests.recall('owner')::uuid)$$, '42501', null, 'anon cannot sweep');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select * from memory.sweep_expired(10, tests.recall('owner')::uuid)$$, '42501', null, 'a signed-in user cannot sweep');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select * from memory.sweep_expired(10, tests.recall('owner')::uuid)$$, '42501', null, 'a tenant admin cannot sweep');

-- Batches are bounded: batch size 2 deletes at most 2 rows of each kind. Each batch resumes where
-- the last stopped; an expired conversation goes once the message scans have passed it.
select tests.authenticate_as_service_role();
create temporary table sweeps as
select 1 as n, * from memory.sweep_expired(2, tests.recall('owner')::uuid);
insert into sweeps select 2, * from memory.sweep_expired(2, tests.recall('owner')::uuid, (select resume from sweeps where n = 1));
insert into sweeps select 3, * from memory.sweep_expired(2, tests.recall('owner')::uuid, (select resume from sweeps where n = 2));
insert into sweeps select 4, * from memory.sweep_expired(2, tests.recall('owner')::uuid, (select resume from sweeps where n = 3));
select results_eq(
    $$select messages_deleted, conversations_deleted, short_term_deleted from sweeps order by n$$,
    $$values (2, 0, 2), (2, 0, 1), (0, 1, 0), (0, 0, 0)$$,
    'batches of 2: the messages, then the rest of them and of the short-term values, then the conversation'
);

-- A row behind where a sweep stopped waits for the next sweep, which starts from the beginning.
update memory.messages set expires_at = now() - interval '1 hour'
where conversation_id = tests.recall('conv')::uuid and turn_number = 3 and role = 'user';
select results_eq(
    $$select messages_deleted from memory.sweep_expired(2, tests.recall('owner')::uuid, (select resume from sweeps where n = 4))$$,
    array[0],
    'a batch resuming past an expired row leaves it'
);
select results_eq(
    $$select messages_deleted from memory.sweep_expired(2, tests.recall('owner')::uuid)$$,
    array[1],
    'the next sweep takes it'
);
select tests.clear_authentication();
select results_eq(
    $$select turn_number, role from memory.messages where conversation_id = tests.recall('conv')::uuid order by turn_number, role desc$$,
    $$values (3, 'assistant')$$,
    'the live answer of turn 3 is kept'
);
-- Only expired rows went.
select results_eq(
    $$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('conv')::uuid)$$,
    'the live conversation is kept and the expired one is gone'
);
select results_eq(
    $$select key from memory.short_term_state where user_id = tests.recall('owner')::uuid$$,
    array['live'],
    'the live short-term value is kept'
);

-- p_user_id confines the sweep to that user.
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('stranger_conv')::uuid$$,
    array[2],
    'the stranger''s expired messages were not swept with the owner''s'
);
select results_eq(
    $$select count(*)::integer from memory.short_term_state where user_id = tests.recall('stranger')::uuid$$,
    array[1],
    'the stranger''s expired short-term value was not swept with the owner''s'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select messages_deleted, conversations_deleted, short_term_deleted from memory.sweep_expired(100, tests.recall('stranger')::uuid)$$,
    $$values (2, 1, 1)$$,
    'sweeping the stranger takes their two messages, their conversation and their value'
);
select tests.clear_authentication();
select is_empty(
    $$select id from memory.conversations where user_id = tests.recall('stranger')::uuid$$,
    'the stranger''s expired conversation is gone'
);

-- An expired conversation takes its (possibly still live) messages with it.
select tests.remember(
    'doomed', (memory.create_conversation(tests.recall('owner')::uuid, 'Doomed', p_ttl => interval '1 hour', p_window_turns => 1000)).id
);
select memory.add_turn(tests.recall('doomed')::uuid, 'q', 'a');
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('doomed')::uuid;
select tests.authenticate_as_service_role();
select results_eq(
    $$select conversations_deleted from memory.sweep_expired(100, tests.recall('owner')::uuid)$$,
    array[1],
    'an expired conversation is swept'
);
select tests.clear_authentication();
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('doomed')::uuid$$,
    'its messages went with it'
);

-- The batch size must be positive.
select tests.authenticate_as_service_role();
select throws_ok($$select * from memory.sweep_expired(0, tests.recall('owner')::uuid)$$, '22023', 'batch size must be positive', 'batch size 0 is refused');
select throws_ok($$select * from memory.sweep_expired(-5, tests.recall('owner')::uuid)$$, '22023', null, 'a negative batch size is refused');

select * from finish();
rollback;
