-- memory.undo_memory, behind seed 004's Undo on "This was saved": a memory that replaced another
-- (an update) gives way to the version it replaced, which is active again, and is soft-deleted as
-- superseded by it (a restore brings it back inactive); a memory that replaced none is forgotten. The
-- version standing again is current: forgotten and restored, it comes back active.
-- Only the owner and service_role may undo: anon 42501, a stranger and a tenant admin P0002.
begin;
select plan(14);

select tests.create_cast('memories-undo');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
select tests.authenticate_as_service_role();
select tests.remember('v1', (select memory_id from memory.remember('I live in Porto', 'fact', tests.recall('owner')::uuid)));
select tests.remember('v2', (select id from memory.revise_memory(tests.recall('v1')::uuid, 'I live in Berlin')));
select tests.remember('new', (select memory_id from memory.remember('I keep bees', 'fact', tests.recall('owner')::uuid)));

select tests.authenticate_as_anon();
select throws_ok(format('select memory.undo_memory(%L)', tests.recall('v2')), '42501', null, 'anon cannot undo');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(format('select memory.undo_memory(%L)', tests.recall('v2')), 'P0002', null, 'a stranger cannot undo the owner''s memory');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(format('select memory.undo_memory(%L)', tests.recall('v2')), 'P0002', null, 'nor a tenant admin');

select tests.authenticate_as(tests.recall('owner')::uuid);
select is((memory.undo_memory(tests.recall('v2')::uuid)).id, tests.recall('v1')::uuid, 'undoing an update returns the version it replaced');
select results_eq(
    $$select id, active, superseded_by, deleted_at is not null from memory.memories
    where id in (tests.recall('v1')::uuid, tests.recall('v2')::uuid) order by content$$,
    $$values (tests.recall('v2')::uuid, false, tests.recall('v1')::uuid, true), (tests.recall('v1')::uuid, true, null::uuid, false)$$,
    'the replaced version stands again; the undone one is deleted, superseded by it'
);
select is((memory.restore_memory(tests.recall('v2')::uuid)).active, false, 'a restore of the undone version brings it back inactive');
select is(
    (select count(*)::int from memory.memories where id in (tests.recall('v1')::uuid, tests.recall('v2')::uuid) and active), 1,
    'two versions are never both active'
);
select is((memory.undo_memory(tests.recall('new')::uuid)).deleted_at is not null, true, 'a memory that replaced none is forgotten');
select throws_ok(format('select memory.undo_memory(%L)', tests.recall('new')), 'P0002', null, 'undoing it again is not found');
select tests.authenticate_as_service_role();
select tests.remember('v3', (select id from memory.revise_memory(tests.recall('v1')::uuid, 'I live in Lisbon')));
select is((memory.undo_memory(tests.recall('v3')::uuid, tests.recall('owner')::uuid)).id, tests.recall('v1')::uuid, 'service_role undoes for the user');
select is(
    (select event from memory.memory_events where memory_id = tests.recall('v3')::uuid order by id desc limit 1), 'supersede',
    'the history records the undone version as replaced'
);
select is(
    (select event from memory.memory_events where memory_id = tests.recall('v1')::uuid order by id desc limit 1), 'reinstate',
    'and the version it replaced as standing again'
);
-- The reinstated version is the current one: forgotten and restored, it comes back active.
select memory.forget(tests.recall('v1')::uuid, tests.recall('owner')::uuid);
select is((memory.restore_memory(tests.recall('v1')::uuid, tests.recall('owner')::uuid)).active, true,
    'a reinstated version forgotten and restored comes back active');
-- Superseded again after its reinstatement, it comes back inactive, even once its successor is purged.
select tests.remember('v4', (select id from memory.revise_memory(tests.recall('v1')::uuid, 'I live in Oslo')));
select memory.forget(tests.recall('v1')::uuid, tests.recall('owner')::uuid);
reset role;
update memory.memories set superseded_by = null where id = tests.recall('v1')::uuid;
select tests.authenticate_as_service_role();
select is((memory.restore_memory(tests.recall('v1')::uuid, tests.recall('owner')::uuid)).active, false,
    'superseded since its reinstatement, it comes back inactive');

select * from finish();
rollback;
