-- Who reaches long-term memory: memory.memories, memory.memory_events, memory.memory_extractions
-- and memory.memory_types for anon (nothing), the owner (reads their own; of the rows themselves
-- writes only the pinned flag of their own memories: everything else goes through the RPCs), a
-- stranger (nothing), the owner's tenant admin (reads, never writes), another tenant's admin
-- (nothing), a together-mode participant of the owner's conversation (shares messages, never
-- memories) and service_role (reads everything; of the rows writes only the pinned flag, like
-- users, and goes through the RPCs for the rest). Then every memory RPC: anon is denied, and
-- apply_extraction, erase_user and the retention sweeps are service_role only; a signed-in user
-- imports only for themselves.
begin;
select plan(78);

select tests.create_cast('memories-rls');
select tests.remember('participant', tests.create_auth_user('memories-rls.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('participant')::uuid, 'Participant', true), (tests.recall('stranger')::uuid, 'Stranger', true);
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Together', 'together', tests.recall('p')::uuid)).id);
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);
select tests.remember('msg', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'I am saving for a house', 'Good plan.')));

select tests.authenticate_as_service_role();
select tests.remember('m', (select memory_id from memory.apply_extraction(
    tests.recall('msg')::bigint, '[{"content": "Saving for a house", "type": "goal"}]', tests.recall('owner')::uuid
)));
select tests.remember('pm', (select memory_id from memory.remember('I play the ukulele', 'fact', tests.recall('participant')::uuid)));

-- memory.memories ------------------------------------------------------------------------------
-- Read through the table, written through the RPCs: the only direct write any API role holds is
-- the pinned flag (direct_writes_cannot_bypass_the_rules.test.sql shows each bypass it closes).
select tests.authenticate_as_anon();
select throws_ok('select * from memory.memories', '42501', null, 'anon cannot read memories');
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'x', 'fact')$$,
    '42501', null, 'anon cannot add a memory'
);
select throws_ok(
    $$update memory.memories set pinned = true where id = tests.recall('m')::uuid$$,
    '42501', null, 'anon cannot pin a memory'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.memories$$,
    $$values (tests.recall('m')::uuid)$$,
    'the owner reads their own memories (and only those)'
);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'I like hiking', 'preference')$$,
    '42501', 'permission denied for table memories',
    'the owner cannot insert a memory directly (memory.remember is the way in)'
);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('stranger')::uuid, 'Planted', 'fact')$$,
    '42501', null, 'the owner cannot add a memory for someone else'
);
select throws_ok(
    $$update memory.memories set content = 'Saving for a small house', confidence = 0.9 where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot edit a memory in place (memory.revise_memory supersedes it)'
);
select throws_ok(
    $$update memory.memories set reference_count = 100 where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot set the reference count (column privilege)'
);
select throws_ok(
    $$update memory.memories set profile_id = null where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot move a memory to another profile (column privilege)'
);
select throws_ok(
    $$update memory.memories set user_id = tests.recall('stranger')::uuid where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot give a memory to someone else (column privilege)'
);
select throws_ok(
    $$delete from memory.memories where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot delete a memory outright (memory.forget soft-deletes it)'
);
select results_eq(
    $$update memory.memories set pinned = true where id = tests.recall('m')::uuid returning pinned$$,
    $$values (true)$$,
    'the owner pins their own memory directly'
);
select results_eq(
    $$update memory.memories set pinned = false where id = tests.recall('m')::uuid returning pinned$$,
    $$values (false)$$,
    'and unpins it'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty($$select id from memory.memories where user_id = tests.recall('owner')::uuid$$, 'a stranger sees none of the owner''s memories');
select is_empty(
    $$update memory.memories set pinned = true where id = tests.recall('m')::uuid returning id$$,
    'a stranger''s pin reaches no memory of the owner'
);
select throws_ok(
    $$update memory.memories set content = 'hacked' where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'a stranger cannot edit in place either'
);
select throws_ok(
    $$delete from memory.memories where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'a stranger cannot delete'
);

select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select id from memory.memories where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('m')::uuid)$$,
    'the owner''s tenant admin reads the owner''s memories'
);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Planted', 'fact')$$,
    '42501', null, 'the tenant admin cannot add a memory for the owner'
);
select throws_ok(
    $$update memory.memories set content = 'edited by admin' where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the tenant admin cannot edit the owner''s memory'
);
select is_empty(
    $$update memory.memories set pinned = true where id = tests.recall('m')::uuid returning id$$,
    'the tenant admin cannot pin the owner''s memory (reads it, but the pin policy is the owner''s)'
);
select throws_ok(
    $$delete from memory.memories where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'the tenant admin cannot delete the owner''s memory'
);

select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty($$select id from memory.memories where user_id = tests.recall('owner')::uuid$$, 'another tenant''s admin sees nothing');

select tests.authenticate_as(tests.recall('participant')::uuid);
select is_empty(
    $$select id from memory.memories where user_id = tests.recall('owner')::uuid$$,
    'a together-mode participant does not see the owner''s memories'
);
select results_eq(
    $$select id from memory.memories$$,
    $$values (tests.recall('pm')::uuid)$$,
    'the participant sees only their own memories'
);

select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.memories where user_id in (tests.recall('owner')::uuid, tests.recall('participant')::uuid)$$,
    array[2],
    'service_role reads every memory'
);
select throws_ok(
    $$update memory.memories set reference_count = 5 where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'service_role cannot set the counters (selection and dedup count uses)'
);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Planted', 'fact')$$,
    '42501', 'permission denied for table memories',
    'service_role cannot insert a memory directly (it remembers for a user with p_user_id)'
);
select throws_ok(
    $$delete from memory.memories where id = tests.recall('m')::uuid$$,
    '42501', 'permission denied for table memories',
    'service_role cannot delete a memory outright'
);
select results_eq(
    $$update memory.memories set pinned = true where id = tests.recall('m')::uuid returning pinned$$,
    $$values (true)$$,
    'service_role pins any memory directly'
);
select tests.clear_authentication();
select results_eq(
    $$select r.rolname::text collate "default", a.privilege_type, string_agg(c.attname::text collate "default", ', ' order by c.attnum)
    from pg_catalog.pg_attribute as c
    cross join lateral aclexplode(c.attacl) as a
    join pg_catalog.pg_roles as r on r.oid = a.grantee
    where c.attrelid = 'memory.memories'::regclass and r.rolname in ('anon', 'authenticated', 'service_role')
        and a.privilege_type <> 'SELECT'
    group by 1, 2 order by 1, 2$$,
    $$values ('authenticated', 'UPDATE', 'pinned'), ('service_role', 'UPDATE', 'pinned')$$,
    'the API roles write one column of memory.memories directly: pinned'
);

-- The security definer helpers that RPCs call as the signed-in user take a user id; they must not
-- tell another tenant's admin (or anyone else) about the owner: their primary profile, or whether
-- they paused memory and wrote a given message.
select tests.clear_authentication();
select memory.set_memory_settings(true, p_user_id => tests.recall('owner')::uuid);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(
    memory_private.memory_profile(tests.recall('owner')::uuid, null, null), null,
    'memory_profile tells another user nothing about the owner''s primary profile'
);
select is(
    memory_private.memory_gate(tests.recall('owner')::uuid, tests.recall('msg')::bigint), 'source message not found',
    'memory_gate tells another user nothing about the owner''s message or settings'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    format($$select memory.remember('x', 'fact', p_source_message_id => %s)$$, tests.recall('msg')),
    '42501', 'memory not allowed: source message not found',
    'a stranger naming the owner''s message as a source learns what a missing one tells: nothing'
);
select tests.clear_authentication();
select memory.set_memory_settings(false, p_user_id => tests.recall('owner')::uuid);

-- memory.memory_events -------------------------------------------------------------------------
select tests.authenticate_as_anon();
select throws_ok('select * from memory.memory_events', '42501', null, 'anon cannot read memory history');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select distinct memory_id from memory.memory_events where memory_id = tests.recall('m')::uuid$$,
    $$values (tests.recall('m')::uuid)$$,
    'the owner reads the history of their memories'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty($$select id from memory.memory_events where user_id = tests.recall('owner')::uuid$$, 'a stranger reads none of the owner''s history');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select isnt_empty(
    $$select id from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    'the owner''s tenant admin reads the owner''s history'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty($$select id from memory.memory_events where user_id = tests.recall('owner')::uuid$$, 'another tenant''s admin reads no history');
select tests.authenticate_as(tests.recall('participant')::uuid);
select is_empty(
    $$select id from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    'a together-mode participant reads none of the owner''s history'
);
select tests.authenticate_as_service_role();
select isnt_empty(
    $$select id from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    'service_role reads the history'
);

-- memory.memory_extractions --------------------------------------------------------------------
select tests.authenticate_as_anon();
select throws_ok('select * from memory.memory_extractions', '42501', null, 'anon cannot read the extraction ledger');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select source_message_id, memory_ids from memory.memory_extractions$$,
    $$values (tests.recall('msg')::bigint, array[tests.recall('m')::uuid])$$,
    'the owner reads their extraction ledger'
);
select throws_ok(
    $$insert into memory.memory_extractions (source_message_id, user_id)
    values ((select assistant_message_id from memory.turns where conversation_id = tests.recall('conv')::uuid), tests.recall('owner')::uuid)$$,
    '42501', 'permission denied for table memory_extractions',
    'the owner cannot write a ledger row'
);
select throws_ok(
    $$update memory.memory_extractions set memory_ids = '{}' where source_message_id = tests.recall('msg')::bigint$$,
    '42501', 'permission denied for table memory_extractions',
    'the owner cannot rewrite a ledger row'
);
select throws_ok(
    $$delete from memory.memory_extractions where source_message_id = tests.recall('msg')::bigint$$,
    '42501', 'permission denied for table memory_extractions',
    'the owner cannot delete a ledger row (to re-extract)'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty($$select source_message_id from memory.memory_extractions where user_id = tests.recall('owner')::uuid$$, 'a stranger reads no ledger row of the owner');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select source_message_id from memory.memory_extractions where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('msg')::bigint)$$,
    'the owner''s tenant admin reads the owner''s ledger'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty($$select source_message_id from memory.memory_extractions where user_id = tests.recall('owner')::uuid$$, 'another tenant''s admin reads no ledger');
select tests.authenticate_as(tests.recall('participant')::uuid);
select is_empty(
    $$select source_message_id from memory.memory_extractions where source_message_id = tests.recall('msg')::bigint$$,
    'a together-mode participant reads no ledger row of the owner'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select source_message_id from memory.memory_extractions where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('msg')::bigint)$$,
    'service_role reads the ledger'
);

-- memory.memory_types --------------------------------------------------------------------------
select tests.authenticate_as_anon();
select throws_ok('select * from memory.memory_types', '42501', null, 'anon cannot read memory types');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select type, weight from memory.memory_types where type in ('goal', 'pattern', 'relationship', 'fact', 'emotion') order by weight desc, type$$,
    $$values ('goal', 1.50), ('pattern', 1.50), ('relationship', 1.30), ('fact', 1.00), ('emotion', 0.80)$$,
    'signed-in users read the type weights (seed 004''s values)'
);
select throws_ok(
    $$insert into memory.memory_types (type, weight, description) values ('secret', 9, 'Boosted')$$,
    '42501', 'permission denied for table memory_types',
    'signed-in users cannot add a type'
);
select throws_ok(
    $$update memory.memory_types set weight = 9 where type = 'fact'$$,
    '42501', 'permission denied for table memory_types',
    'signed-in users cannot change a weight'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$update memory.memory_types set weight = 1.10 where type = 'fact' returning weight$$,
    $$values (1.10)$$,
    'service_role retunes a weight'
);

-- RPCs: anon is denied every memory RPC.
select tests.authenticate_as_anon();
select throws_ok($$select memory.remember('x', 'fact')$$, '42501', null, 'anon cannot call remember');
select throws_ok($$select memory.revise_memory(tests.recall('m')::uuid, 'x')$$, '42501', null, 'anon cannot call revise_memory');
select throws_ok($$select memory.forget(tests.recall('m')::uuid)$$, '42501', null, 'anon cannot call forget');
select throws_ok($$select memory.restore_memory(tests.recall('m')::uuid)$$, '42501', null, 'anon cannot call restore_memory');
select throws_ok($$select memory.pin_memory(tests.recall('m')::uuid)$$, '42501', null, 'anon cannot call pin_memory');
select throws_ok($$select memory.unarchive_memory(tests.recall('m')::uuid)$$, '42501', null, 'anon cannot call unarchive_memory');
select throws_ok($$select memory.set_memory_settings(true)$$, '42501', null, 'anon cannot call set_memory_settings');
select throws_ok(
    $$select memory.apply_extraction(tests.recall('msg')::bigint, '[]', tests.recall('owner')::uuid)$$,
    '42501', null, 'anon cannot call apply_extraction'
);
select throws_ok($$select memory.select_memories(tests.recall('owner')::uuid)$$, '42501', null, 'anon cannot call select_memories');
select throws_ok(
    $$select memory.mark_memories_used(tests.recall('msg')::bigint, array[tests.recall('m')::uuid])$$,
    '42501', null, 'anon cannot call mark_memories_used'
);
select throws_ok($$select memory.prompt_context(tests.recall('conv')::uuid)$$, '42501', null, 'anon cannot call prompt_context');
select throws_ok($$select memory.search_memories('house', tests.recall('owner')::uuid)$$, '42501', null, 'anon cannot call search_memories');
select throws_ok($$select memory.export_memories(tests.recall('owner')::uuid)$$, '42501', null, 'anon cannot call export_memories');
select throws_ok(
    $$select memory.import_memories('{"format": "supamem.memories", "version": 1}', tests.recall('owner')::uuid)$$,
    '42501', null, 'anon cannot call import_memories'
);
select throws_ok($$select memory.erase_user(tests.recall('owner')::uuid)$$, '42501', null, 'anon cannot call erase_user');
select tests.clear_authentication();
-- By name, whatever the signatures: all fifteen exist, none executable by anon.
select results_eq(
    $$select count(distinct p.proname)::integer, count(*) filter (where has_function_privilege('anon', p.oid, 'execute'))::integer
    from pg_catalog.pg_proc as p
    where p.pronamespace = 'memory'::regnamespace and p.proname = any(array[
        'remember', 'revise_memory', 'forget', 'restore_memory', 'unarchive_memory', 'pin_memory', 'set_memory_settings',
        'apply_extraction',
        'select_memories', 'mark_memories_used', 'prompt_context', 'search_memories', 'export_memories', 'import_memories',
        'erase_user'
    ])$$,
    $$values (15, 0)$$,
    'anon holds EXECUTE on none of the 15 memory RPCs (not even through PUBLIC)'
);

-- RPCs: service_role only.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select memory.apply_extraction(tests.recall('msg')::bigint, '[]', tests.recall('owner')::uuid)$$,
    '42501', 'permission denied for function apply_extraction',
    'a signed-in user cannot apply an extraction'
);
select throws_ok(
    $$select memory.import_memories('{"format": "supamem.memories", "version": 1}', tests.recall('stranger')::uuid)$$,
    '42501', 'a signed-in user imports only for themselves',
    'a signed-in user imports only for themselves'
);
select throws_ok(
    $$select memory.erase_user()$$,
    '42501', 'permission denied for function erase_user',
    'a signed-in user cannot erase a user (not even themselves)'
);
select throws_ok(
    $$select memory_private.archive_stale_memories()$$,
    '42501', 'permission denied for function archive_stale_memories',
    'a signed-in user cannot run the archival sweep'
);
select throws_ok(
    $$select memory_private.purge_deleted_memories()$$,
    '42501', 'permission denied for function purge_deleted_memories',
    'a signed-in user cannot run the purge'
);
select tests.clear_authentication();
select results_eq(
    $$select p.oid::regprocedure::text, has_function_privilege('authenticated', p.oid, 'execute'),
        has_function_privilege('service_role', p.oid, 'execute')
    from pg_catalog.pg_proc as p
    where (p.pronamespace = 'memory'::regnamespace and p.proname in ('apply_extraction', 'import_memories', 'erase_user'))
        or (p.pronamespace = 'memory_private'::regnamespace and p.proname in ('archive_stale_memories', 'purge_deleted_memories'))
    order by p.proname$$,
    $$values ('memory.apply_extraction(bigint,jsonb,uuid)', false, true),
        ('memory_private.archive_stale_memories(timestamp with time zone,integer)', false, true),
        ('memory.erase_user(uuid)', false, true),
        ('memory.import_memories(jsonb,uuid)', true, true),
        ('memory_private.purge_deleted_memories(timestamp with time zone,integer)', false, true)$$,
    'apply_extraction, erase_user and the sweeps: service_role executes them, authenticated does not; import_memories both (a user for themselves)'
);

select * from finish();
rollback;
