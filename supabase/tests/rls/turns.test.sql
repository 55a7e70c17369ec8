-- memory.turns (a security_invoker view over messages): each caller sees exactly the turns whose
-- messages RLS lets them read: the owner, a together-mode participant and the owner's tenant
-- admin do; strangers and other tenants do not. The view is read-only for clients, and it never
-- shows expired messages, not even to service_role.
begin;
select plan(13);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rls-turns');
select tests.remember('participant', tests.create_auth_user('rls-turns.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv',
    (memory.create_conversation(tests.recall('owner')::uuid, 'Together', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'Question one', 'Answer one');
select memory.add_turn(tests.recall('conv')::uuid, 'Question two', 'Answer two');
select memory.add_message(tests.recall('conv')::uuid, 'user', 'Question three, unanswered');

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.turns', '42501', null, 'anon cannot read turns');

-- The owner reads whole turns: a question paired with its answer, an open turn without one.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number, user_content, assistant_content from memory.turns
    where conversation_id = tests.recall('conv')::uuid order by turn_number$$,
    $$values (1, 'Question one', 'Answer one'), (2, 'Question two', 'Answer two'), (3, 'Question three, unanswered', null)$$,
    'the owner reads their turns, paired by turn number'
);
select results_eq(
    $$select count(*)::integer from memory.turns as t join memory.messages as m on m.id = t.user_message_id
    where t.conversation_id = tests.recall('conv')::uuid and m.role = 'user' and m.turn_number = t.turn_number$$,
    array[3],
    'each turn''s user_message_id points at that turn''s user message'
);
select throws_ok(
    $$insert into memory.turns (conversation_id, turn_number) values (tests.recall('conv')::uuid, 9)$$,
    '55000', null, 'the owner cannot write to the turns view (it is not insertable)'
);

-- A stranger sees no turn.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select turn_number from memory.turns where conversation_id = tests.recall('conv')::uuid$$,
    'a stranger reads no turn of the owner'
);

-- A participant reads the shared turns.
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select count(*)::integer from memory.turns where conversation_id = tests.recall('conv')::uuid$$,
    array[3],
    'a participant reads the shared conversation''s turns'
);

-- Tenant A's admin reads the turns; tenant B's admin does not.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select count(*)::integer from memory.turns where conversation_id = tests.recall('conv')::uuid$$,
    array[3],
    'tenant A''s admin reads the owner''s turns'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select turn_number from memory.turns where conversation_id = tests.recall('conv')::uuid$$,
    'tenant B''s admin reads no turn of tenant A'
);

-- service_role reads every turn.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.turns where conversation_id = tests.recall('conv')::uuid$$,
    array[3],
    'service_role reads the turns'
);
select throws_ok(
    $$insert into memory.turns (conversation_id, turn_number) values (tests.recall('conv')::uuid, 9)$$,
    '55000', null, 'the view is not insertable, even for service_role'
);

-- Expired messages drop out of the view for everyone, before any sweep.
select tests.clear_authentication();
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('conv')::uuid and turn_number = 1;
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select turn_number from memory.turns where conversation_id = tests.recall('conv')::uuid order by turn_number$$,
    array[2, 3],
    'an expired turn is gone from the owner''s view'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select turn_number from memory.turns where conversation_id = tests.recall('conv')::uuid order by turn_number$$,
    array[2, 3],
    'an expired turn is gone from service_role''s view too'
);
-- Half-expired turn: only the answer expired, so the turn shows its question and no answer.
select tests.clear_authentication();
update memory.messages set expires_at = now() - interval '1 second'
where conversation_id = tests.recall('conv')::uuid and turn_number = 2 and role = 'assistant';
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select user_content, assistant_content from memory.turns
    where conversation_id = tests.recall('conv')::uuid and turn_number = 2$$,
    $$values ('Question two', null::text)$$,
    'a turn whose answer expired shows the question alone'
);

select * from finish();
rollback;
