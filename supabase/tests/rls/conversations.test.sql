-- memory.conversations: the owner reads and manages their conversations; a together-mode
-- participant and the owner's tenant admin read them but change nothing; strangers and other
-- tenants see nothing; expired conversations are hidden from everyone signed in; the turn counter
-- and expiry are not writable by clients.
begin;
select plan(26);

-- Setup passes an explicit window (never reached here) so the file does not depend on the global
-- retention defaults; constraints/retention_defaults.test.sql covers those.
select tests.create_cast('rls-conversations');
select tests.remember('participant', tests.create_auth_user('rls-conversations.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv',
    (memory.create_conversation(tests.recall('owner')::uuid, 'Shared chat', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select tests.remember('expired', (memory.create_conversation(tests.recall('owner')::uuid, 'Old', p_window_turns => 1000)).id);
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('expired')::uuid;

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.conversations', '42501', null, 'anon cannot read conversations');
select throws_ok(
    $$insert into memory.conversations (user_id, window_turns) values (tests.recall('owner')::uuid, 1000)$$,
    '42501', null, 'anon cannot create a conversation'
);

-- The owner reads (only live conversations), creates, updates and deletes their own.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('conv')::uuid)$$,
    'the owner reads their live conversation and not the expired one'
);
select lives_ok(
    $$insert into memory.conversations (user_id, title, window_turns) values (tests.recall('owner')::uuid, 'Via the Data API', 1000)$$,
    'the owner creates a conversation through the Data API'
);
select results_eq(
    $$select tenant_id from memory.conversations where title = 'Via the Data API'$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'a new conversation takes the owner''s tenant'
);
select throws_ok(
    $$insert into memory.conversations (user_id, window_turns) values (tests.recall('stranger')::uuid, 1000)$$,
    '42501', null, 'the owner cannot create a conversation for someone else'
);
select results_eq(
    $$update memory.conversations set title = 'Renamed', archived = true where id = tests.recall('conv')::uuid returning title$$,
    array['Renamed'],
    'the owner renames and archives their conversation'
);
select throws_ok(
    $$update memory.conversations set last_turn = 99 where id = tests.recall('conv')::uuid$$,
    '42501', null, 'the owner cannot move the turn counter'
);
select throws_ok(
    $$update memory.conversations set expires_at = null where id = tests.recall('conv')::uuid$$,
    '42501', null, 'the owner cannot change the expiry'
);
select throws_ok(
    $$update memory.conversations set user_id = tests.recall('stranger')::uuid where id = tests.recall('conv')::uuid$$,
    '42501', null, 'the owner cannot hand a conversation to someone else'
);
select results_eq(
    $$delete from memory.conversations where title = 'Via the Data API' returning title$$,
    array['Via the Data API'],
    'the owner deletes their conversation'
);

-- A stranger (same tenant) sees and changes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    'a stranger does not read the owner''s conversations'
);
select is_empty(
    $$update memory.conversations set title = 'Mine now' where id = tests.recall('conv')::uuid returning id$$,
    'a stranger cannot update the owner''s conversation'
);
select is_empty(
    $$delete from memory.conversations where id = tests.recall('conv')::uuid returning id$$,
    'a stranger cannot delete the owner''s conversation'
);

-- Together mode: a participant reads the shared conversation but cannot change or delete it.
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('conv')::uuid)$$,
    'a participant reads the shared conversation (and not the owner''s others)'
);
select is_empty(
    $$update memory.conversations set title = 'Participant title' where id = tests.recall('conv')::uuid returning id$$,
    'a participant cannot update the shared conversation'
);
select is_empty(
    $$delete from memory.conversations where id = tests.recall('conv')::uuid returning id$$,
    'a participant cannot delete the shared conversation'
);

-- Tenant A's admin reads the owner's live conversations and changes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('conv')::uuid)$$,
    'tenant A''s admin reads the owner''s live conversation'
);
select is_empty(
    $$update memory.conversations set title = 'Admin title' where id = tests.recall('conv')::uuid returning id$$,
    'tenant A''s admin cannot update the conversation'
);
select is_empty(
    $$delete from memory.conversations where id = tests.recall('conv')::uuid returning id$$,
    'tenant A''s admin cannot delete the conversation'
);
select throws_ok(
    $$insert into memory.conversations (user_id, window_turns) values (tests.recall('owner')::uuid, 1000)$$,
    '42501', null, 'tenant A''s admin cannot create a conversation for the owner'
);

-- Tenant B's admin sees nothing of tenant A.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    'tenant B''s admin does not read tenant A''s conversations'
);

-- service_role reads everything (expired rows included: it runs the sweep) and writes for anyone.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    array[2],
    'service_role reads the owner''s conversations, expired ones included'
);
select lives_ok(
    $$insert into memory.conversations (user_id, title, window_turns) values (tests.recall('stranger')::uuid, 'Service made', 1000)$$,
    'service_role creates a conversation for any user'
);
select results_eq(
    $$update memory.conversations set archived = false where id = tests.recall('conv')::uuid returning archived$$,
    array[false],
    'service_role updates any conversation'
);
select results_eq(
    $$delete from memory.conversations where id = tests.recall('expired')::uuid returning title$$,
    array['Old'],
    'service_role deletes any conversation'
);

select * from finish();
rollback;
