-- memory.clear_memories: seed 004's "Clear all memories". It soft-deletes every memory of the
-- caller (or of one profile) that is not deleted yet, with a 'delete' event each, and every one
-- can be restored. anon may not call it; a stranger or a tenant admin clears nothing of the
-- owner's; service_role clears the user it names.
begin;
select plan(12);

select tests.create_cast('memories-clear');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id
)
select tests.remember('main', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Friend', false) returning id
)
select tests.remember('side', id) from p;
insert into memory.memories (user_id, profile_id, content, type, archived) values
(tests.recall('owner')::uuid, tests.recall('main')::uuid, 'Has a cat named Mingming', 'fact', false),
(tests.recall('owner')::uuid, tests.recall('main')::uuid, 'Likes long walks', 'preference', true),
(tests.recall('owner')::uuid, tests.recall('side')::uuid, 'Friend likes tea', 'preference', false);
insert into memory.memories (user_id, profile_id, content, type, deleted_at, active) values
(tests.recall('owner')::uuid, tests.recall('main')::uuid, 'Already deleted', 'fact', now() - interval '1 day', false);
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger', true);
insert into memory.memories (user_id, profile_id, content, type)
select tests.recall('stranger')::uuid, p.id, 'The stranger''s memory', 'fact'
from memory.profiles as p where p.user_id = tests.recall('stranger')::uuid;

select tests.authenticate_as_anon();
select throws_ok($$select memory.clear_memories()$$, '42501', null, 'anon cannot clear memories');

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.clear_memories(tests.recall('owner')::uuid), 0, 'a stranger naming the owner clears nothing');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.clear_memories(tests.recall('owner')::uuid), 0, 'the owner''s tenant admin clears nothing of theirs');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.memories where user_id = tests.recall('owner')::uuid and deleted_at is null), 3,
    'the owner''s memories are untouched'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.clear_memories(p_profile_id => tests.recall('side')::uuid), 1, 'the owner clears one profile');
select is(memory.clear_memories(), 2, 'then everything else that was not deleted, archived ones too');
select is(memory.clear_memories(), 0, 'clearing again finds nothing');
select tests.clear_authentication();
select is_empty(
    $$select 1 from memory.memories where user_id = tests.recall('owner')::uuid and (deleted_at is null or active)$$,
    'every memory of the owner is deleted and inactive'
);
select is(
    (select count(*)::integer from memory.memory_events as e
    where e.user_id = tests.recall('owner')::uuid and e.event = 'delete'),
    3, 'each cleared memory has its delete event'
);
select is(
    (select count(*)::integer from memory.memories where user_id = tests.recall('stranger')::uuid and deleted_at is null), 1,
    'nobody else''s memories are touched'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select count(*)::integer from memory.memories as m, memory.restore_memory(m.id) as r
    where m.user_id = tests.recall('owner')::uuid and m.content <> 'Already deleted'),
    3, 'every cleared memory can be restored'
);
select tests.authenticate_as_service_role();
select is(memory.clear_memories(tests.recall('owner')::uuid), 3, 'service_role clears the user it names');

select * from finish();
rollback;
