-- An expired memory has left the live set for dedup, the cap and archival as it has for
-- selection and search: the same statement after expiry is a new memory, expired memories take
-- no place under memory_cap, and archival archives them (pinned ones too) and nothing live.
begin;
select plan(7);

select tests.authenticate_as_service_role();
select tests.remember('u', memory.user_id_for('memories-expired.u'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Main', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('lisbon', (select memory_id from memory.remember(
    'Visiting Lisbon this week', 'fact', tests.recall('u')::uuid, p_expires_at => now() + interval '1 hour')));
select tests.clear_authentication();
update memory.memories set expires_at = now() - interval '1 second' where id = tests.recall('lisbon')::uuid;

-- Dedup.
select tests.authenticate_as_service_role();
select results_eq(
    $$select outcome from memory.remember('Visiting Lisbon this week', 'fact', tests.recall('u')::uuid)$$,
    $$values ('added')$$,
    'the same statement after the first one expired is a new memory'
);
select is(
    (select reference_count from memory.memories where id = tests.recall('lisbon')::uuid), 0,
    'and the expired one is not bumped'
);
select results_eq(
    $$select outcome from memory.remember('Visiting Lisbon this week', 'fact', tests.recall('u')::uuid)$$,
    $$values ('duplicate')$$,
    'while a live one is deduplicated as before'
);

-- The cap (2 here): two expired memories leave room for two live ones.
select tests.clear_authentication();
update memory_private.settings set value = '2' where key = 'memory_cap';
insert into memory.memories (user_id, profile_id, content, type, expires_at, pinned) values
(tests.recall('u')::uuid, tests.recall('p')::uuid, 'Has a dentist appointment on Friday', 'fact', now() - interval '1 day', false),
(tests.recall('u')::uuid, tests.recall('p')::uuid, 'Is at a conference until Sunday', 'fact', now() - interval '1 day', true);
select tests.authenticate_as_service_role();
select results_eq(
    $$select outcome from memory.remember('Plays the cello every evening', 'fact', tests.recall('u')::uuid)$$,
    $$values ('added')$$,
    'a second live memory fits under a cap of 2 although expired ones exist'
);
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.memories
    where user_id = tests.recall('u')::uuid and archived),
    0, 'nothing was archived to make room'
);

-- Archival: every expired memory, pinned or not; nothing live.
-- (It runs over everyone: only this user's rows are checked.)
select memory_private.archive_stale_memories();
select results_eq(
    $$select content, archived from memory.memories where user_id = tests.recall('u')::uuid and archived order by content$$,
    $$values ('Has a dentist appointment on Friday', true), ('Is at a conference until Sunday', true),
        ('Visiting Lisbon this week', true)$$,
    'archival archives the three expired memories, the pinned one too'
);
select is(
    (select count(*)::integer from memory.memories where user_id = tests.recall('u')::uuid and not archived),
    2, 'the live Lisbon memory and the cello stay'
);

select * from finish();
rollback;
