-- memory.messages: the owner writes, reads, annotates and deletes the messages of their
-- conversations; in together mode a participant reads the shared messages and posts their own
-- (as their author) but cannot change or delete them, and nobody writes in another's name; the owner's tenant admin reads but never writes; strangers and other
-- tenants see nothing. Owner, tenant, turn number and expiry are set by the table, not by clients.
begin;
select plan(30);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rls-messages');
select tests.remember('participant', tests.create_auth_user('rls-messages.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv',
    (memory.create_conversation(tests.recall('owner')::uuid, 'Together', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select tests.remember('first_question', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'Hello?', 'Hi!')));

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.messages', '42501', null, 'anon cannot read messages');
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', 'anon says hi')$$,
    '42501', null, 'anon cannot write a message'
);

-- The owner reads, writes (numbered by the table), annotates and deletes.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[2],
    'the owner reads the messages of their conversation'
);
select results_eq(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', 'Second question')
    returning turn_number, user_id = tests.recall('owner')::uuid, tenant_id = tests.recall('tenant_a')::uuid$$,
    $$values (2, true, true)$$,
    'the owner writes a message through the Data API; the table numbers it and fills owner and tenant'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, author_id)
    values (tests.recall('conv')::uuid, 'user', 'Written for the participant', tests.recall('participant')::uuid)$$,
    '42501', 'only the author writes their own words',
    'the owner cannot put words in a participant''s mouth'
);
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$insert into memory.messages (conversation_id, role, content)
    values (tests.recall('conv')::uuid, 'user', 'Written by the participant')
    returning author_id = tests.recall('participant')::uuid, user_id = tests.recall('owner')::uuid, turn_number$$,
    $$values (true, true, 3)$$,
    'a participant posts in the shared conversation as its author; the owner owns the message'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.messages (conversation_id, user_id, role, content)
    values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid, 'user', 'Owned by someone else')$$,
    '42501', null, 'the owner cannot choose a message''s owner column'
);
select results_eq(
    $$update memory.messages set metadata = '{"starred": true}' where id = tests.recall('first_question')::bigint
    returning metadata ->> 'starred'$$,
    array['true'],
    'the owner annotates a message'
);
select throws_ok(
    $$update memory.messages set content = 'rewritten history' where id = tests.recall('first_question')::bigint$$,
    '42501', null, 'the owner cannot rewrite a message''s content'
);
select throws_ok(
    $$update memory.messages set turn_number = 7 where id = tests.recall('first_question')::bigint$$,
    '42501', null, 'the owner cannot renumber a message'
);
select results_eq(
    $$delete from memory.messages where conversation_id = tests.recall('conv')::uuid and content = 'Written by the participant'
    returning author_id$$,
    $$values (tests.recall('participant')::uuid)$$,
    'the owner deletes a message'
);

-- A stranger (same tenant) reads nothing and writes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    'a stranger does not read the owner''s messages'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', 'Intruding')$$,
    'P0002', 'conversation not found', 'a stranger cannot write to the owner''s conversation, nor learn that it exists'
);
select is_empty(
    $$update memory.messages set metadata = '{}' where conversation_id = tests.recall('conv')::uuid returning id$$,
    'a stranger cannot update the owner''s messages'
);
select is_empty(
    $$delete from memory.messages where conversation_id = tests.recall('conv')::uuid returning id$$,
    'a stranger cannot delete the owner''s messages'
);

-- Together mode: a participant reads the shared messages, writes only in their own name, and
-- cannot change or delete them.
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[3],
    'a participant reads the shared conversation''s messages'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, author_id)
    values (tests.recall('conv')::uuid, 'user', 'Said by the owner?', tests.recall('owner')::uuid)$$,
    '42501', 'only the author writes their own words', 'a participant cannot write in the owner''s name'
);
select is_empty(
    $$update memory.messages set metadata = '{"by": "participant"}' where conversation_id = tests.recall('conv')::uuid returning id$$,
    'a participant cannot update the shared messages'
);
select is_empty(
    $$delete from memory.messages where conversation_id = tests.recall('conv')::uuid returning id$$,
    'a participant cannot delete the shared messages'
);

-- Tenant A's admin reads the owner's messages and writes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[3],
    'tenant A''s admin reads the owner''s messages'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'assistant', 'Admin answers')$$,
    '42501', null, 'tenant A''s admin cannot write to the owner''s conversation'
);
select is_empty(
    $$update memory.messages set metadata = '{"by": "admin"}' where conversation_id = tests.recall('conv')::uuid returning id$$,
    'tenant A''s admin cannot update the owner''s messages'
);
select is_empty(
    $$delete from memory.messages where conversation_id = tests.recall('conv')::uuid returning id$$,
    'tenant A''s admin cannot delete the owner''s messages'
);

-- Tenant B's admin sees nothing of tenant A.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    'tenant B''s admin does not read tenant A''s messages'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'user', 'Cross-tenant')$$,
    'P0002', 'conversation not found', 'tenant B''s admin cannot write to tenant A''s conversation, nor learn that it exists'
);

-- service_role reads and writes any conversation's messages.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[3],
    'service_role reads the messages'
);
select results_eq(
    $$insert into memory.messages (conversation_id, role, content) values (tests.recall('conv')::uuid, 'assistant', 'Service answer')
    returning turn_number$$,
    array[3],
    'service_role writes a message (it answers the open turn 3, whose question the owner deleted)'
);
select results_eq(
    $$update memory.messages set content = 'Corrected by the service' where conversation_id = tests.recall('conv')::uuid
    and content = 'Service answer' returning content$$,
    array['Corrected by the service'],
    'service_role updates a message'
);
select results_eq(
    $$with gone as (
        delete from memory.messages where conversation_id = tests.recall('conv')::uuid and turn_number >= 2
        returning turn_number, role
    )
    select * from gone order by turn_number$$,
    $$values (2, 'user'), (3, 'assistant')$$,
    'service_role deletes messages'
);
select results_eq(
    $$select turn_number, role from memory.messages where conversation_id = tests.recall('conv')::uuid order by id$$,
    $$values (1, 'user'), (1, 'assistant')$$,
    'only the first turn is left'
);

select * from finish();
rollback;
