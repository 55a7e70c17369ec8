-- Seed 004's Settings controls, as the signed-in owner: memory.forget soft-deletes (undo is exact),
-- memory.restore_memory brings a deleted memory back (a superseded one stays inactive),
-- memory.pin_memory pins and unpins, memory.set_memory_settings pauses memory and opts in to
-- long-term storage. Missing memories, and memories of someone else, are not found (P0002).
begin;
select plan(26);

select tests.create_cast('memories-soft-delete');
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('owner')::uuid, 'Me', true), (tests.recall('stranger')::uuid, 'Stranger', true);

select tests.authenticate_as_service_role();
select tests.remember('m', (select memory_id from memory.remember('I have a cat named Mingming', 'fact', tests.recall('owner')::uuid)));
select tests.remember('old', (select memory_id from memory.remember('I work in Ortigas', 'fact', tests.recall('owner')::uuid)));
select tests.remember('new', (memory.revise_memory(tests.recall('old')::uuid, 'I work from home')).id);

select tests.authenticate_as(tests.recall('owner')::uuid);

-- forget: soft delete, once.
select results_eq(
    $$select id, deleted_at = now(), active, content from memory.forget(tests.recall('m')::uuid)$$,
    $$values (tests.recall('m')::uuid, true, false, 'I have a cat named Mingming')$$,
    'forget marks the memory deleted and inactive and keeps its content'
);
select results_eq(
    $$select count(*)::integer from memory.memories where id = tests.recall('m')::uuid$$,
    array[1],
    'a forgotten memory is still stored (soft delete)'
);
select throws_ok(
    $$select memory.forget(tests.recall('m')::uuid)$$,
    'P0002', 'memory not found or already deleted',
    'forgetting a deleted memory again is not found'
);
select throws_ok(
    $$select memory.forget(gen_random_uuid())$$,
    'P0002', 'memory not found or already deleted',
    'forgetting a missing memory is not found'
);

-- restore: the undo.
select results_eq(
    $$select id, deleted_at, active from memory.restore_memory(tests.recall('m')::uuid)$$,
    $$values (tests.recall('m')::uuid, null::timestamptz, true)$$,
    'restore brings the memory back, active'
);
select throws_ok(
    $$select memory.restore_memory(tests.recall('m')::uuid)$$,
    'P0002', 'no deleted memory with that id',
    'restoring a memory that is not deleted is not found'
);
select throws_ok(
    $$select memory.restore_memory(gen_random_uuid())$$,
    'P0002', 'no deleted memory with that id',
    'restoring a missing memory is not found'
);

-- A superseded memory can be deleted, and restoring it keeps it inactive and linked.
select results_eq(
    $$select active, deleted_at is not null from memory.forget(tests.recall('old')::uuid)$$,
    $$values (false, true)$$,
    'a superseded memory can be forgotten'
);
select results_eq(
    $$select active, deleted_at, superseded_by from memory.restore_memory(tests.recall('old')::uuid)$$,
    $$values (false, null::timestamptz, tests.recall('new')::uuid)$$,
    'restoring a superseded memory keeps it inactive and linked to its successor'
);
select results_eq(
    $$select count(*)::integer from memory.memories where id in (tests.recall('old')::uuid, tests.recall('new')::uuid) and active$$,
    array[1],
    'after the restore only the successor is active'
);

-- pin / unpin.
select results_eq(
    $$select pinned from memory.pin_memory(tests.recall('m')::uuid)$$,
    $$values (true)$$,
    'pin_memory pins by default'
);
select results_eq(
    $$select pinned from memory.pin_memory(tests.recall('m')::uuid, false)$$,
    $$values (false)$$,
    'pin_memory(id, false) unpins'
);
select results_eq(
    $$select pinned from memory.pin_memory(tests.recall('m')::uuid, null)$$,
    $$values (true)$$,
    'pin_memory(id, null) pins'
);
select throws_ok(
    $$select memory.pin_memory(gen_random_uuid())$$,
    'P0002', 'memory not found',
    'pinning a missing memory is not found'
);

-- Someone else's memory is not found, and stays as it was.
select memory.forget(tests.recall('new')::uuid);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.forget(tests.recall('m')::uuid)$$,
    'P0002', 'memory not found or already deleted',
    'a stranger cannot forget the owner''s memory'
);
select throws_ok(
    $$select memory.pin_memory(tests.recall('m')::uuid, false)$$,
    'P0002', 'memory not found',
    'a stranger cannot unpin the owner''s memory'
);
select throws_ok(
    $$select memory.restore_memory(tests.recall('new')::uuid)$$,
    'P0002', 'no deleted memory with that id',
    'a stranger cannot restore the owner''s deleted memory'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.forget(tests.recall('m')::uuid)$$,
    'P0002', 'memory not found or already deleted',
    'the owner''s tenant admin reads but cannot forget the owner''s memory'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id, pinned, deleted_at is null from memory.memories where id in (tests.recall('m')::uuid, tests.recall('new')::uuid)
    order by id = tests.recall('new')::uuid$$,
    $$values (tests.recall('m')::uuid, true, true), (tests.recall('new')::uuid, false, false)$$,
    'the owner''s memories are as the owner left them'
);

-- set_memory_settings: pause and long-term opt-in, each left alone when not given.
select results_eq(
    $$select id, memory_paused, long_term_opt_in from memory.set_memory_settings(true)$$,
    $$values (tests.recall('owner')::uuid, true, false)$$,
    'the owner pauses memory'
);
select results_eq(
    $$select memory_paused, long_term_opt_in from memory.set_memory_settings(p_long_term_opt_in => true)$$,
    $$values (true, true)$$,
    'opting in to long-term storage leaves the pause as it was'
);
select results_eq(
    $$select memory_paused, long_term_opt_in from memory.set_memory_settings(false)$$,
    $$values (false, true)$$,
    'resuming memory leaves the opt-in as it was'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.set_memory_settings(true, false, tests.recall('owner')::uuid)$$,
    'P0002', 'user not found',
    'a stranger cannot change the owner''s settings (not found)'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select memory_paused, long_term_opt_in from memory.users where id = tests.recall('owner')::uuid$$,
    $$values (false, true)$$,
    'the owner''s settings are as the owner left them'
);
select results_eq(
    $$select memory_paused from memory.set_memory_settings(true, p_user_id => tests.recall('owner')::uuid)$$,
    $$values (true)$$,
    'service_role changes a user''s settings by id'
);
select throws_ok(
    $$select memory.set_memory_settings(true)$$,
    '22023', 'user id required',
    'service_role must name the user'
);

select * from finish();
rollback;
