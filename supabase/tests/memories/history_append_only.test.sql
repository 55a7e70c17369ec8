-- memory.memory_events is the audit trail: every change to a memory appends the right events (add,
-- update, supersede, delete, restore, archive, unarchive, pin, unpin, reference) with the old and
-- new content, the actor's id (auth.uid()) and role, written by trigger in the same transaction.
-- Nobody rewrites or removes history: not authenticated, not service_role (no privilege), not even
-- the table owner (guard trigger). Only erasing the user removes their history, and only theirs.
begin;
select plan(22);

select tests.create_cast('memories-history');
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('owner')::uuid, 'Me', true), (tests.recall('stranger')::uuid, 'Stranger', true);

-- add (a signed-in user)
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('m', (select memory_id from memory.remember('I like mangoes', 'preference')));
select results_eq(
    $$select event, old_content, new_content, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('m')::uuid order by id$$,
    $$values ('add', null::text, 'I like mangoes', tests.recall('owner')::uuid, 'authenticated')$$,
    'add: the new content, the signed-in user as actor'
);

-- update (the table owner edits the content in place: no API role may, they revise instead)
select tests.clear_authentication();
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m')::uuid));
update memory.memories set content = 'I love mangoes' where id = tests.recall('m')::uuid;
select results_eq(
    $$select event, old_content, new_content, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('m')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('update', 'I like mangoes', 'I love mangoes', null::uuid, session_user::text collate "default")$$,
    'update: old and new content, the table owner as actor (no user id)'
);

-- supersede (the owner revises)
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m')::uuid));
select tests.remember('m2', (memory.revise_memory(tests.recall('m')::uuid, 'I love ripe mangoes')).id);
select results_eq(
    $$select event, old_content, new_content, details, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('m')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('supersede', 'I love mangoes', 'I love mangoes', jsonb_build_object('superseded_by', tests.recall('m2')::uuid),
        tests.recall('owner')::uuid, 'authenticated')$$,
    'supersede: the old version records its successor'
);
select results_eq(
    $$select event, old_content, new_content, actor_id from memory.memory_events where memory_id = tests.recall('m2')::uuid order by id$$,
    $$values ('add', null::text, 'I love ripe mangoes', tests.recall('owner')::uuid)$$,
    'supersede: the new version starts with its own add'
);

-- delete and restore
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select memory.forget(tests.recall('m2')::uuid);
select results_eq(
    $$select event, old_content, new_content, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('delete', 'I love ripe mangoes', 'I love ripe mangoes', tests.recall('owner')::uuid, 'authenticated')$$,
    'delete'
);
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select memory.restore_memory(tests.recall('m2')::uuid);
select results_eq(
    $$select event, actor_id from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('restore', tests.recall('owner')::uuid)$$,
    'restore'
);

-- archive (by the table owner, as the cap and the archival sweep do) and unarchive (the owner)
select tests.clear_authentication();
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
update memory.memories set archived = true where id = tests.recall('m2')::uuid;
select results_eq(
    $$select event, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('archive', null::uuid, session_user::text collate "default")$$,
    'archive'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select memory.unarchive_memory(tests.recall('m2')::uuid);
select results_eq(
    $$select event, actor_id from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('unarchive', tests.recall('owner')::uuid)$$,
    'unarchive'
);

-- pin and unpin
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select memory.pin_memory(tests.recall('m2')::uuid);
select results_eq(
    $$select event, actor_id from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('pin', tests.recall('owner')::uuid)$$,
    'pin'
);
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select memory.pin_memory(tests.recall('m2')::uuid, false);
select results_eq(
    $$select event, actor_id from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('unpin', tests.recall('owner')::uuid)$$,
    'unpin'
);

-- reference: a duplicate (which may raise the confidence) and a selection
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select memory.remember('I love ripe mangoes', 'preference', p_confidence => 0.9);
select results_eq(
    $$select event, details, actor_id, actor_role from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('reference', '{"reference_count": 1, "confidence": 0.900}'::jsonb, tests.recall('owner')::uuid, 'authenticated')$$,
    'reference (duplicate): one reference event carrying the new count and confidence, no update event'
);
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
select count(*) from memory.select_memories(p_record => true);
select results_eq(
    $$select event, details ->> 'reference_count', actor_id from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('reference', '2', tests.recall('owner')::uuid)$$,
    'reference (selection)'
);

-- One change, several events: the table owner edits and pins in one statement.
select tests.clear_authentication();
select tests.remember('mark', (select max(id) from memory.memory_events where memory_id = tests.recall('m2')::uuid));
update memory.memories set content = 'I adore ripe mangoes', pinned = true where id = tests.recall('m2')::uuid;
select results_eq(
    $$select event, old_content, new_content, actor_role from memory.memory_events
    where memory_id = tests.recall('m2')::uuid and id > tests.recall('mark')::bigint order by id$$,
    $$values ('update', 'I love ripe mangoes', 'I adore ripe mangoes', session_user::text collate "default"),
        ('pin', 'I love ripe mangoes', 'I adore ripe mangoes', session_user::text collate "default")$$,
    'one statement that edits and pins appends an update and a pin event'
);

-- History cannot be forged, rewritten or removed.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.memory_events (memory_id, user_id, event, actor_role)
    values (tests.recall('m2')::uuid, tests.recall('owner')::uuid, 'add', 'authenticated')$$,
    '42501', null,
    'authenticated cannot insert history'
);
select throws_ok(
    $$update memory.memory_events set new_content = 'forged' where user_id = tests.recall('owner')::uuid$$,
    '42501', null,
    'authenticated cannot update history'
);
select throws_ok(
    $$delete from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    '42501', null,
    'authenticated cannot delete history'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.memory_events set new_content = 'forged' where user_id = tests.recall('owner')::uuid$$,
    '42501', null,
    'service_role cannot update history'
);
select throws_ok(
    $$delete from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    '42501', null,
    'service_role cannot delete history'
);
select tests.clear_authentication();
select throws_ok(
    $$update memory.memory_events set new_content = 'forged' where user_id = tests.recall('owner')::uuid$$,
    '42501', 'memory history is append-only',
    'the table owner cannot update history (guard trigger)'
);
select throws_ok(
    $$delete from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    '42501', 'memory history is append-only',
    'the table owner cannot delete history (guard trigger)'
);

-- Erasing a user removes their history and nobody else's.
select tests.authenticate_as_service_role();
select memory.remember('I play the violin', 'fact', tests.recall('stranger')::uuid);
select memory.forget((select id from memory.memories where user_id = tests.recall('stranger')::uuid));
select tests.remember('stranger_events', (select count(*) from memory.memory_events where user_id = tests.recall('stranger')::uuid));
select memory.erase_user(tests.recall('owner')::uuid);
select is_empty(
    $$select id from memory.memory_events
    where user_id = tests.recall('owner')::uuid or memory_id in (tests.recall('m')::uuid, tests.recall('m2')::uuid)$$,
    'erase_user removes the user''s history'
);
select results_eq(
    $$select count(*)::text, bool_and(event in ('add', 'delete')) from memory.memory_events where user_id = tests.recall('stranger')::uuid$$,
    $$values (tests.recall('stranger_events'), true)$$,
    'erase_user leaves another user''s history intact'
);

select * from finish();
rollback;
