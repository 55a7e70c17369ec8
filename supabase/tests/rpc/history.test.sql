-- memory.history(conversation, limit, offset, newest_first): the newest `limit` messages after
-- skipping `offset`, oldest-first for prompts or newest-first for screens, the question before the
-- answer within a turn; limit 1..1000 and offset >= 0 (22023); callers read only what RLS lets them.
begin;
select plan(22);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rpc-history');
select tests.remember('participant', tests.create_auth_user('rpc-history.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'History', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('q%s', i), format('a%s', i)) from generate_series(1, 5) as i;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok(
    $$select * from memory.history(tests.recall('conv')::uuid)$$,
    '42501', null, 'anon cannot read history'
);

-- The owner pages through the history.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid)$$,
    array['q1', 'a1', 'q2', 'a2', 'q3', 'a3', 'q4', 'a4', 'q5', 'a5'],
    'by default: everything, oldest first, question before answer'
);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 3, 0, true)$$,
    array['a5', 'q5', 'a4'],
    'newest-first: the newest three, newest first'
);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 3)$$,
    array['a4', 'q5', 'a5'],
    'oldest-first: the same newest three, in reading order'
);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 2, 2, true)$$,
    array['a4', 'q4'],
    'newest-first with offset 2 skips the two newest'
);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 2, 2)$$,
    array['q4', 'a4'],
    'oldest-first with offset 2 shows the same page in reading order'
);
select is_empty(
    $$select content from memory.history(tests.recall('conv')::uuid, 5, 10)$$,
    'an offset past the end returns nothing'
);
select results_eq(
    $$select count(*)::integer from memory.history(tests.recall('conv')::uuid, 1000)$$,
    array[10],
    'limit 1000 is allowed'
);

-- Bounds are checked.
select throws_ok($$select * from memory.history(tests.recall('conv')::uuid, 0)$$, '22023', null, 'limit 0 is refused');
select throws_ok($$select * from memory.history(tests.recall('conv')::uuid, 1001)$$, '22023', null, 'limit 1001 is refused');
select throws_ok($$select * from memory.history(tests.recall('conv')::uuid, null)$$, '22023', null, 'a null limit is refused');
select throws_ok($$select * from memory.history(tests.recall('conv')::uuid, 10, -1)$$, '22023', null, 'a negative offset is refused');
select is_empty(
    $$select * from memory.history(gen_random_uuid())$$,
    'a missing conversation has no history'
);

-- A stranger reads nothing; a participant and tenant A's admin read it; tenant B's admin does not.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select * from memory.history(tests.recall('conv')::uuid)$$,
    'a stranger reads no history of the owner'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 2)$$,
    array['q5', 'a5'],
    'a participant reads the shared history'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 2)$$,
    array['q5', 'a5'],
    'tenant A''s admin reads the owner''s history'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select * from memory.history(tests.recall('conv')::uuid)$$,
    'tenant B''s admin reads no history of tenant A'
);

-- service_role reads anyone's history.
select tests.authenticate_as_service_role();
select results_eq(
    $$select content from memory.history(tests.recall('conv')::uuid, 2, 0, true)$$,
    array['a5', 'q5'],
    'service_role reads the owner''s history'
);

-- The owner's history is the same list as the table under RLS (nothing invented, nothing lost).
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.history(tests.recall('conv')::uuid, 1000)$$,
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid order by turn_number, role desc$$,
    'history returns exactly the conversation''s messages'
);

-- History checks access once, for the conversation: it answers as the conversations policy does.
-- Each caller reads the history exactly when RLS shows them the conversation.
create temporary table readers as
select r.name, r.id from (values
    ('owner', tests.recall('owner')::uuid), ('stranger', tests.recall('stranger')::uuid),
    ('participant', tests.recall('participant')::uuid), ('admin_a', tests.recall('admin_a')::uuid),
    ('admin_b', tests.recall('admin_b')::uuid)
) as r (name, id);
grant select on readers to authenticated;
create temporary table answers (name text, reads_history boolean, sees_conversation boolean);
grant insert on answers to authenticated;
create function pg_temp.answer(p_name text) returns void language plpgsql as $fn$
begin
    insert into answers
    select p_name,
        exists (select 1 from memory.history(tests.recall('conv')::uuid, 1)),
        exists (select 1 from memory.conversations where id = tests.recall('conv')::uuid);
end
$fn$;
select tests.authenticate_as(tests.recall('owner')::uuid);
select pg_temp.answer('owner');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select pg_temp.answer('stranger');
select tests.authenticate_as(tests.recall('participant')::uuid);
select pg_temp.answer('participant');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select pg_temp.answer('admin_a');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select pg_temp.answer('admin_b');
select tests.clear_authentication();
select results_eq(
    $$select name, reads_history, sees_conversation from answers order by name$$,
    $$values ('admin_a', true, true), ('admin_b', false, false), ('owner', true, true),
        ('participant', true, true), ('stranger', false, false)$$,
    'owner, participant and tenant admin read it; a stranger and another tenant''s admin do not'
);
-- An expired conversation is no one's to read, even when its messages carry no expiry.
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('conv')::uuid;
update memory.messages set expires_at = null where conversation_id = tests.recall('conv')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is_empty(
    $$select * from memory.history(tests.recall('conv')::uuid)$$,
    'the owner reads no history of an expired conversation'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.history(tests.recall('conv')::uuid, 1000)$$,
    array[10],
    'service_role still reads it (until the sweep)'
);
select tests.clear_authentication();

select * from finish();
rollback;
