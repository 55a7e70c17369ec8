-- memory.list_conversations(user, archived, limit, offset): seed 002's conversation list, most
-- recently active first, without archived ones unless asked (null: both), never expired ones;
-- paged (limit 1..200, offset 0..100000, 22023 otherwise). Row-level security decides: a user
-- lists their own, anon nothing, a stranger or another tenant's admin none of the owner's, the
-- service role the user it names.
begin;
select plan(10);

select tests.create_cast('rpc-list-conversations');
select tests.remember('old', (memory.create_conversation(tests.recall('owner')::uuid, 'Old', p_window_turns => 1000)).id);
select tests.remember('new', (memory.create_conversation(tests.recall('owner')::uuid, 'New', p_window_turns => 1000)).id);
select tests.remember('archived', (memory.create_conversation(tests.recall('owner')::uuid, 'Archived', p_window_turns => 1000)).id);
select tests.remember('expired', (memory.create_conversation(tests.recall('owner')::uuid, 'Expired', p_ttl => '1 hour')).id);
update memory.conversations set updated_at = now() - interval '2 days' where id = tests.recall('old')::uuid;
update memory.conversations set archived = true where id = tests.recall('archived')::uuid;
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('expired')::uuid;
select memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs');

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select title from memory.list_conversations()$$,
    $$values ('New'), ('Old')$$,
    'the owner''s live, unarchived conversations, most recently active first'
);
select results_eq(
    $$select title from memory.list_conversations(p_archived => true)$$,
    $$values ('Archived')$$,
    'archived ones when asked'
);
select results_eq(
    $$select title from memory.list_conversations(p_archived => null) order by title$$,
    $$values ('Archived'), ('New'), ('Old')$$,
    'both with a null filter, never the expired one'
);
select results_eq(
    $$select title from memory.list_conversations(p_limit => 1, p_offset => 1)$$,
    $$values ('Old')$$,
    'paged'
);
select throws_ok(
    $$select * from memory.list_conversations(p_limit => 0)$$,
    '22023', 'limit must be 1..200 and offset 0..100000', 'a bad page is refused'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.list_conversations(tests.recall('owner')::uuid)$$,
    'a stranger naming the owner lists nothing of the owner''s'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.list_conversations(tests.recall('owner')::uuid)$$,
    'another tenant''s admin lists nothing of the owner''s'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select count(*)::integer from memory.list_conversations(tests.recall('owner')::uuid)$$,
    array[2],
    'the owner''s tenant admin reads the owner''s list, as the table allows'
);
select tests.authenticate_as_anon();
select throws_ok($$select * from memory.list_conversations()$$, '42501', null, 'anon cannot list');
select tests.authenticate_as_service_role();
select results_eq(
    $$select title from memory.list_conversations(tests.recall('stranger')::uuid)$$,
    $$values ('Theirs')$$,
    'the service role lists the conversations of the user it names'
);

select * from finish();
rollback;
