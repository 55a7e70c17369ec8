-- memory.sweep_expired never lets a cascade turn one batch into an unbounded delete: an expired
-- conversation goes only after its messages have, each call deleting at most one batch of
-- messages (expired ones and those of expired conversations together).
begin;
select plan(7);

select tests.authenticate_as_service_role();
select tests.remember('u', memory.user_id_for('sweep-bounded.u'));
select tests.remember('c', (memory.create_conversation(tests.recall('u')::uuid, p_ttl => interval '1 hour')).id);
select memory.add_turn(tests.recall('c')::uuid, 'q' || n, 'a' || n) from generate_series(1, 5) as n;
select tests.clear_authentication();
update memory.messages set expires_at = now() - interval '1 second' where conversation_id = tests.recall('c')::uuid;
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('c')::uuid;

select tests.authenticate_as_service_role();
select results_eq(
    $$select messages_deleted, conversations_deleted from memory.sweep_expired(2, tests.recall('u')::uuid)$$,
    $$values (2, 0)$$,
    'a batch of 2 deletes 2 messages and keeps the conversation while it has messages'
);
select is(
    (select count(*)::integer from memory.messages where conversation_id = tests.recall('c')::uuid),
    8, 'the rest of the messages wait for the next batches'
);
select memory.sweep_expired(2, tests.recall('u')::uuid) from generate_series(1, 5);
select is_empty(
    $$select 1 from memory.messages where conversation_id = tests.recall('c')::uuid$$,
    'later batches take the remaining messages'
);
select is_empty(
    $$select 1 from memory.conversations where id = tests.recall('c')::uuid$$,
    'and then the conversation'
);

-- Messages that outlive their expired conversation (its TTL was shortened) fill what is left of
-- a batch after the expired messages: one expired message and one orphan make a batch of 2.
select tests.authenticate_as_service_role();
select tests.remember('c2', (memory.create_conversation(tests.recall('u')::uuid, p_ttl => interval '1 hour')).id);
select memory.add_turn(tests.recall('c2')::uuid, 'q' || n, 'a' || n) from generate_series(1, 2) as n;
select tests.clear_authentication();
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('c2')::uuid;
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('c2')::uuid and turn_number = 1 and role = 'user';
select tests.authenticate_as_service_role();
select results_eq(
    $$select messages_deleted, conversations_deleted from memory.sweep_expired(2, tests.recall('u')::uuid)$$,
    $$values (2, 0)$$,
    'the expired message and one orphan make up the batch'
);
select is(
    (select count(*)::integer from memory.messages where conversation_id = tests.recall('c2')::uuid), 2,
    'the other orphans wait'
);
select results_eq(
    $$select messages_deleted, conversations_deleted from memory.sweep_expired(5, tests.recall('u')::uuid)$$,
    $$values (2, 1)$$,
    'the next batch takes them and then the conversation'
);

select * from finish();
rollback;
