-- memory.revise_memory never edits a fact in place: the new version is a new active memory and the
-- old one becomes inactive with superseded_by pointing at it, so two versions are never both
-- active. Only an active memory can be revised (55000); a missing one is P0002. The table itself
-- forbids a successor on an active memory (23514), a memory succeeding itself (23514) and a
-- successor belonging to another user (23503).
begin;
select plan(17);

select tests.create_cast('memories-supersede');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger', true);

select tests.authenticate_as_service_role();
select tests.remember('v1', (select memory_id from memory.remember(
    'I live in Manila', 'fact', tests.recall('owner')::uuid, p_category => 'home', p_confidence => 0.9, p_pinned => true
)));

-- Revise: a new active memory that inherits what was not changed.
select results_eq(
    $$select content, active, superseded_by, user_id, profile_id, type, category, confidence, pinned, id <> tests.recall('v1')::uuid
    from memory.revise_memory(tests.recall('v1')::uuid, 'I live in Makati')$$,
    $$values ('I live in Makati', true, null::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid,
        'fact', 'home', 0.900::numeric, true, true)$$,
    'revising returns a new active memory that keeps the type, category, confidence, pin and profile'
);
select tests.remember('v2', (select id from memory.memories where user_id = tests.recall('owner')::uuid and content = 'I live in Makati'));
select results_eq(
    $$select content, active, superseded_by, deleted_at from memory.memories where id = tests.recall('v1')::uuid$$,
    $$values ('I live in Manila', false, tests.recall('v2')::uuid, null::timestamptz)$$,
    'the old version keeps its content, becomes inactive and points at its successor'
);
select results_eq(
    $$select count(*)::integer from memory.memories where id in (tests.recall('v1')::uuid, tests.recall('v2')::uuid) and active$$,
    array[1],
    'exactly one of the two versions is active'
);

-- The new version may change the type, category and confidence.
select results_eq(
    $$select type, category, confidence from memory.revise_memory(tests.recall('v2')::uuid, 'I moved to Taguig', 'decision', 'moving', 0.6)$$,
    $$values ('decision', 'moving', 0.600::numeric)$$,
    'a revision may set a new type, category and confidence'
);
select tests.remember('v3', (select id from memory.memories where user_id = tests.recall('owner')::uuid and content = 'I moved to Taguig'));
select results_eq(
    $$select id, active, superseded_by from memory.memories
    where id in (tests.recall('v1')::uuid, tests.recall('v2')::uuid, tests.recall('v3')::uuid)
    order by created_at, content = 'I moved to Taguig', content = 'I live in Makati'$$,
    $$values (tests.recall('v1')::uuid, false, tests.recall('v2')::uuid),
        (tests.recall('v2')::uuid, false, tests.recall('v3')::uuid),
        (tests.recall('v3')::uuid, true, null::uuid)$$,
    'a chain of revisions links each version to the next and leaves only the newest active'
);

-- Only an active memory can be revised; a missing one is not found.
select throws_ok(
    $$select memory.revise_memory(tests.recall('v1')::uuid, 'I live in Pasig')$$,
    '55000', 'only an active memory can be revised',
    'revising a superseded memory is refused'
);
select tests.remember('gone', (select memory_id from memory.remember('I have a parrot', 'fact', tests.recall('owner')::uuid)));
select memory.forget(tests.recall('gone')::uuid);
select throws_ok(
    $$select memory.revise_memory(tests.recall('gone')::uuid, 'I have two parrots')$$,
    '55000', 'only an active memory can be revised',
    'revising a deleted memory is refused'
);
select throws_ok(
    $$select memory.revise_memory(gen_random_uuid(), 'Anything')$$,
    'P0002', 'memory not found',
    'revising a missing memory is not found'
);
select results_eq(
    $$select count(*)::integer from memory.memories
    where user_id = tests.recall('owner')::uuid and content in ('I live in Pasig', 'I have two parrots', 'Anything')$$,
    array[0],
    'a refused revision adds no memory'
);

-- The table's own rules on successors. They hold for the table owner too, the only role left that
-- writes rows directly (the API roles go through the RPCs: see rpc_only_writes.test.sql).
select tests.clear_authentication();
select throws_ok(
    $$update memory.memories set superseded_by = tests.recall('v1')::uuid where id = tests.recall('v3')::uuid$$,
    '23514', 'new row for relation "memories" violates check constraint "memories_superseded_is_inactive"',
    'an active memory cannot have a successor'
);
select throws_ok(
    $$insert into memory.memories (user_id, content, type, superseded_by)
    values (tests.recall('owner')::uuid, 'Another version', 'fact', tests.recall('v3')::uuid)$$,
    '23514', 'new row for relation "memories" violates check constraint "memories_superseded_is_inactive"',
    'a new active memory cannot have a successor'
);
select throws_ok(
    $$update memory.memories set active = false, superseded_by = id where id = tests.recall('v3')::uuid$$,
    '23514', 'new row for relation "memories" violates check constraint "memories_not_own_successor"',
    'a memory cannot succeed itself'
);
select tests.remember('theirs', (select memory_id from memory.remember('I like jazz', 'preference', tests.recall('stranger')::uuid)));
select throws_ok(
    $$update memory.memories set active = false, superseded_by = tests.recall('theirs')::uuid where id = tests.recall('v3')::uuid$$,
    '23503', null,
    'a successor must belong to the same user'
);
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.memories
    where user_id = tests.recall('owner')::uuid and active and content in ('I live in Manila', 'I live in Makati', 'I moved to Taguig')$$,
    array[1],
    'after every refused change, still exactly one version is active'
);

-- A signed-in owner revises their own memory; a stranger does not find it.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select content, active from memory.revise_memory(tests.recall('v3')::uuid, 'I moved to Quezon City')$$,
    $$values ('I moved to Quezon City', true)$$,
    'the owner revises their own memory'
);
select results_eq(
    $$select active, superseded_by is not null from memory.memories where id = tests.recall('v3')::uuid$$,
    $$values (false, true)$$,
    'the owner''s revision superseded the previous version'
);
select tests.remember('v4', (select id from memory.memories where content = 'I moved to Quezon City'));
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.revise_memory(tests.recall('v4')::uuid, 'Hijacked')$$,
    'P0002', 'memory not found',
    'a stranger cannot revise someone else''s memory (not found)'
);

select * from finish();
rollback;
