-- Memories are written through the RPCs only (20261123001000), so no role that reaches the Data
-- API can bypass the rules the RPCs keep. Each bypass a direct write used to allow is refused
-- with 42501 for the owner, a stranger, the owner's tenant admin, anon and service_role, and the
-- RPC that does the same thing by the rules works:
--   1. an insert skipped dedup and the cap              -> memory.remember
--   2. an update edited content in place                -> memory.revise_memory (supersedes)
--   3. an update unarchived past the cap                -> memory.unarchive_memory (cap holds)
--   4. an update cleared superseded_by / set active     -> memory.restore_memory (a superseded
--      memory stays inactive, even once its successor is purged)
--   5. a delete left no undo and no history             -> memory.forget / memory.restore_memory
-- The only direct write left is the pinned flag. The RPCs' implementations guard themselves (a
-- caller who skips the wrapper gains nothing), the table owner still meets the gate trigger, and
-- seed 004's Settings flows all have their path for a signed-in user. memory_cap is 3 here.
begin;
select plan(60);

update memory_private.settings set value = '3' where key = 'memory_cap';
select tests.create_cast('memories-direct-writes');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger', true);

select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('a', (select memory_id from memory.remember('I drink green tea every morning', 'preference')));
select tests.remember('b', (select memory_id from memory.remember('I am learning to play the guitar', 'goal')));
select tests.remember('c', (select memory_id from memory.remember('My sister lives in Cebu', 'relationship')));

-- What the API roles hold on the table: no insert, no delete, no truncate, and of update only
-- the pinned column.
select tests.clear_authentication();
select results_eq(
    $$select r.role, has_table_privilege(r.role, 'memory.memories', 'INSERT'),
        has_any_column_privilege(r.role, 'memory.memories', 'INSERT'),
        has_table_privilege(r.role, 'memory.memories', 'UPDATE'),
        has_table_privilege(r.role, 'memory.memories', 'DELETE'),
        has_table_privilege(r.role, 'memory.memories', 'TRUNCATE'),
        array(
            select c.attname::text collate "default" from pg_catalog.pg_attribute as c
            where c.attrelid = 'memory.memories'::regclass and c.attnum > 0 and not c.attisdropped
                and has_column_privilege(r.role, 'memory.memories', c.attname, 'UPDATE')
            order by c.attnum
        )
    from unnest(array['anon', 'authenticated', 'service_role']) as r (role)
    order by r.role$$,
    $$values ('anon', false, false, false, false, false, '{}'::text[]),
        ('authenticated', false, false, false, false, false, array['pinned']),
        ('service_role', false, false, false, false, false, array['pinned'])$$,
    'anon, authenticated and service_role insert, delete and truncate nothing and update only pinned'
);

-- 1. Insert: dedup and the cap ---------------------------------------------------------------
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'I drink green tea every morning!', 'preference')$$,
    '42501', 'permission denied for table memories',
    'the owner cannot insert a near-duplicate directly'
);
select throws_ok(
    $$insert into memory.memories (user_id, profile_id, content, type, pinned, archived, reference_count)
    values (tests.recall('owner')::uuid, tests.recall('p')::uuid, 'I want to run a marathon', 'goal', false, false, 0)$$,
    '42501', 'permission denied for table memories',
    'the owner cannot insert a fourth live memory directly at the cap'
);
select results_eq(
    $$select memory_id, outcome from memory.remember('I drink green tea every morning!', 'preference')$$,
    $$values (tests.recall('a')::uuid, 'duplicate')$$,
    'remember: the near-duplicate is absorbed by the live memory'
);
select results_eq(
    $$select outcome from memory.remember('I want to run a marathon', 'goal')$$,
    $$values ('added')$$,
    'remember: a fourth memory is added'
);
select results_eq(
    $$select count(*) filter (where not archived)::integer, count(*) filter (where archived)::integer
    from memory.memories where user_id = tests.recall('owner')::uuid and active and deleted_at is null$$,
    $$values (3, 1)$$,
    'remember: the cap keeps three live memories and archives the lowest-scored'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Planted', 'fact')$$,
    '42501', null, 'a stranger cannot insert'
);
select throws_ok(
    $$select memory.remember('Planted', 'fact', tests.recall('owner')::uuid)$$,
    '42501', 'a signed-in user remembers only for themselves',
    'a stranger cannot remember for the owner'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Planted', 'fact')$$,
    '42501', null, 'the tenant admin cannot insert'
);
select throws_ok(
    $$select memory.remember('Planted', 'fact', tests.recall('owner')::uuid)$$,
    '42501', 'a signed-in user remembers only for themselves',
    'the tenant admin cannot remember for the owner'
);
select tests.authenticate_as_anon();
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Planted', 'fact')$$,
    '42501', null, 'anon cannot insert'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'I drink green tea every morning', 'preference')$$,
    '42501', 'permission denied for table memories',
    'service_role cannot insert directly either'
);
select results_eq(
    $$select memory_id, outcome from memory.remember('I drink green tea every morning', 'preference', tests.recall('owner')::uuid)$$,
    $$values (tests.recall('a')::uuid, 'duplicate')$$,
    'service_role remembers for the owner, with dedup'
);

-- 2. Update: edit in place ---------------------------------------------------------------------
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$update memory.memories set content = 'I drink matcha every morning' where id = tests.recall('a')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot edit the content in place'
);
select throws_ok(
    $$update memory.memories set type = 'fact', category = 'drinks', confidence = 1, context = '{"x": 1}',
        expires_at = now() + interval '1 day' where id = tests.recall('a')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot change type, category, confidence, context or expiry in place'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.memories set content = 'I drink matcha every morning' where id = tests.recall('a')::uuid$$,
    '42501', 'permission denied for table memories',
    'service_role cannot edit the content in place'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('a2', (memory.revise_memory(tests.recall('a')::uuid, 'I drink matcha every morning')).id);
select results_eq(
    $$select id, active, superseded_by from memory.memories where id in (tests.recall('a')::uuid, tests.recall('a2')::uuid)
    order by id = tests.recall('a2')::uuid$$,
    $$values (tests.recall('a')::uuid, false, tests.recall('a2')::uuid), (tests.recall('a2')::uuid, true, null::uuid)$$,
    'revise_memory: the edit is a new version and the old one points at it, inactive'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.revise_memory(tests.recall('a2')::uuid, 'Hijacked')$$,
    'P0002', 'memory not found', 'a stranger cannot revise the owner''s memory'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.revise_memory(tests.recall('a2')::uuid, 'Hijacked')$$,
    'P0002', 'memory not found', 'the tenant admin cannot revise the owner''s memory'
);

-- 3. Update: unarchive past the cap ------------------------------------------------------------
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('x', (select id from memory.memories where user_id = tests.recall('owner')::uuid and archived and active));
select throws_ok(
    $$update memory.memories set archived = false where id = tests.recall('x')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot unarchive directly'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.memories set archived = false where id = tests.recall('x')::uuid$$,
    '42501', 'permission denied for table memories',
    'service_role cannot unarchive directly'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select lives_ok($$select memory.unarchive_memory(tests.recall('x')::uuid)$$, 'unarchive_memory: the owner unarchives');
select results_eq(
    $$select count(*) filter (where not archived)::integer, count(*) filter (where archived)::integer
    from memory.memories where user_id = tests.recall('owner')::uuid and active and deleted_at is null$$,
    $$values (3, 1)$$,
    'unarchive_memory: the cap still holds (the lowest-scored live memory made room)'
);
select tests.remember('y', (select id from memory.memories where user_id = tests.recall('owner')::uuid and archived and active));
select memory.pin_memory(tests.recall('y')::uuid);
select results_eq(
    $$select id, archived, pinned from memory.unarchive_memory(tests.recall('y')::uuid)$$,
    $$values (tests.recall('y')::uuid, false, true)$$,
    'unarchive_memory: a pinned memory comes back live'
);
select throws_ok(
    $$select memory.unarchive_memory(tests.recall('y')::uuid)$$,
    'P0002', 'no archived memory with that id', 'unarchiving a live memory is not found'
);
select tests.remember('z', (select id from memory.memories where user_id = tests.recall('owner')::uuid and archived and active));
select results_eq(
    $$select archived from memory.revise_memory(tests.recall('z')::uuid, 'An archived memory, revised')$$,
    $$values (true)$$,
    'revise_memory: the new version of an archived memory stays in the archive'
);
select results_eq(
    $$select count(*)::integer from memory.memories
    where user_id = tests.recall('owner')::uuid and active and not archived and deleted_at is null$$,
    array[3],
    'so a revision never brings the profile past the cap'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.unarchive_memory(tests.recall('z')::uuid)$$,
    'P0002', 'no archived memory with that id', 'a stranger cannot unarchive the owner''s memory'
);

-- 4. Update: clear superseded_by, set active ---------------------------------------------------
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$update memory.memories set superseded_by = null, active = true where id = tests.recall('a')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot reactivate a superseded version'
);
select throws_ok(
    $$update memory.memories set active = false where id = tests.recall('a2')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot deactivate a memory directly'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.memories set superseded_by = null, active = true where id = tests.recall('a')::uuid$$,
    '42501', 'permission denied for table memories',
    'service_role cannot reactivate a superseded version'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.forget(tests.recall('a')::uuid);
select results_eq(
    $$select active, superseded_by from memory.restore_memory(tests.recall('a')::uuid)$$,
    $$values (false, tests.recall('a2')::uuid)$$,
    'restore_memory: a superseded version comes back inactive'
);
-- Its successor deleted and purged: superseded_by is cleared by the foreign key, yet the old
-- version stays inactive when restored.
select memory.forget(tests.recall('a')::uuid);
select memory.forget(tests.recall('a2')::uuid);
select tests.clear_authentication();
update memory.memories set deleted_at = now() - interval '40 days' where id = tests.recall('a2')::uuid;
select is(memory_private.purge_deleted_memories(), 1, 'the successor is purged');
select is(
    (select superseded_by from memory.memories where id = tests.recall('a')::uuid), null,
    'which clears the old version''s link'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select active, deleted_at from memory.restore_memory(tests.recall('a')::uuid)$$,
    $$values (false, null::timestamptz)$$,
    'restore_memory: a version that was ever superseded stays inactive'
);

-- 5. Delete: undo and history ------------------------------------------------------------------
select throws_ok(
    $$delete from memory.memories where id = tests.recall('b')::uuid$$,
    '42501', 'permission denied for table memories',
    'the owner cannot delete a memory outright'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$delete from memory.memories where id = tests.recall('b')::uuid$$,
    '42501', 'permission denied for table memories', 'a stranger cannot delete'
);
select throws_ok(
    $$select memory.forget(tests.recall('b')::uuid)$$,
    'P0002', 'memory not found or already deleted', 'a stranger cannot forget the owner''s memory'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$delete from memory.memories where id = tests.recall('b')::uuid$$,
    '42501', 'permission denied for table memories', 'the tenant admin cannot delete'
);
select throws_ok(
    $$select memory.forget(tests.recall('b')::uuid)$$,
    'P0002', 'memory not found or already deleted', 'the tenant admin cannot forget the owner''s memory'
);
select tests.authenticate_as_anon();
select throws_ok($$delete from memory.memories where id = tests.recall('b')::uuid$$, '42501', null, 'anon cannot delete');
select tests.authenticate_as_service_role();
select throws_ok(
    $$delete from memory.memories where id = tests.recall('b')::uuid$$,
    '42501', 'permission denied for table memories', 'service_role cannot delete a memory outright'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select deleted_at is not null, active from memory.forget(tests.recall('b')::uuid)$$,
    $$values (true, false)$$,
    'forget: the owner deletes softly'
);
select results_eq(
    $$select deleted_at, active from memory.restore_memory(tests.recall('b')::uuid)$$,
    $$values (null::timestamptz, true)$$,
    'restore_memory: and undoes it'
);
select results_eq(
    $$select array_agg(event order by id) from memory.memory_events
    where memory_id = tests.recall('b')::uuid and event in ('delete', 'restore')$$,
    $$values (array['delete', 'restore'])$$,
    'both are in the history'
);

-- The implementations guard themselves: calling them past the wrappers changes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory_private.forget(tests.recall('b')::uuid, null)$$,
    'P0002', 'memory not found or already deleted',
    'a stranger calling the implementation directly does not find the owner''s memory'
);
select throws_ok(
    $$select memory_private.remember('Planted', 'fact', tests.recall('owner')::uuid, null, null, 0.8, '{}', null, false, null)$$,
    '42501', 'a signed-in user remembers only for themselves',
    'nor remembers for the owner'
);
select throws_ok(
    $$select memory_private.import_memories('{"format": "supamem.memories", "version": 1}', tests.recall('owner')::uuid)$$,
    '42501', 'a signed-in user imports only for themselves',
    'nor imports for the owner'
);
-- The authenticated role without a user id in its claims acts for nobody.
select tests.clear_authentication();
select set_config('role', 'authenticated', true);
select throws_ok(
    $$select memory.remember('Planted', 'fact', tests.recall('owner')::uuid)$$,
    '42501', 'memories are changed by a signed-in user or the service role',
    'authenticated without a user id cannot remember for anyone'
);
select throws_ok(
    $$select memory.pin_memory(tests.recall('b')::uuid, true, tests.recall('owner')::uuid)$$,
    '42501', 'memories are changed by a signed-in user or the service role',
    'nor pin anyone''s memory'
);
select is_empty(
    $$update memory.memories set pinned = true where id = tests.recall('b')::uuid returning id$$,
    'nor pin directly (the pin policy matches no row without a user id)'
);
select tests.clear_authentication();

-- The table owner, the one role that still writes rows directly, still meets the gate.
select tests.remember('generic', (memory.create_conversation(tests.recall('owner')::uuid, 'Generic chat')).id);
select tests.remember('msg', (select user_message_id from memory.add_turn(tests.recall('generic')::uuid, 'I live in Manila', 'Nice.')));
select throws_ok(
    $$insert into memory.memories (user_id, content, type, source_message_id)
    values (tests.recall('owner')::uuid, 'Lives in Manila', 'fact', tests.recall('msg')::bigint)$$,
    '42501', 'memory not allowed: no profile is selected in the conversation',
    'the table owner''s direct insert still meets the gate'
);

-- Seed 004's Settings flows, as the signed-in owner.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$update memory.memories set pinned = true where id = tests.recall('b')::uuid returning pinned$$,
    $$values (true)$$,
    'Settings: pin directly'
);
select results_eq(
    $$select pinned from memory.pin_memory(tests.recall('b')::uuid, false)$$,
    $$values (false)$$,
    'Settings: unpin through the RPC'
);
select results_eq(
    $$select content, active from memory.revise_memory(tests.recall('b')::uuid, 'I am learning to play the ukulele')$$,
    $$values ('I am learning to play the ukulele', true)$$,
    'Settings: edit'
);
select tests.remember('b2', (select id from memory.memories where content = 'I am learning to play the ukulele'));
select results_eq(
    $$select active from memory.forget(tests.recall('b2')::uuid)$$,
    $$values (false)$$,
    'Settings: delete'
);
select results_eq(
    $$select active, deleted_at from memory.restore_memory(tests.recall('b2')::uuid)$$,
    $$values (true, null::timestamptz)$$,
    'Settings: undo the delete'
);
select results_eq(
    $$select memory_paused from memory.set_memory_settings(true)$$,
    $$values (true)$$,
    'Settings: pause memory'
);
select results_eq(
    $$select memory_paused from memory.set_memory_settings(false)$$,
    $$values (false)$$,
    'Settings: resume memory'
);
select results_eq(
    $$select event, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('b')::uuid and event in ('pin', 'unpin', 'supersede') order by id desc limit 3$$,
    $$values ('supersede', tests.recall('owner')::uuid, 'authenticated'), ('unpin', tests.recall('owner')::uuid, 'authenticated'),
        ('pin', tests.recall('owner')::uuid, 'authenticated')$$,
    'the history names the owner as the actor of each change, direct pin and RPCs alike'
);

select * from finish();
rollback;
