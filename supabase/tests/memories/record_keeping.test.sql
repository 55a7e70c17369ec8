-- Record keeping around a memory: every change moves updated_at (unless the writer sets it, as
-- an import does); an empty category in a revision clears it; search's 'active' leaves out expired
-- memories as selection does; restore counts against the cap; an export carries the user's
-- memory settings and an import brings them back without ever un-pausing memory.
begin;
select plan(10);

select tests.authenticate_as_service_role();
select tests.remember('u', memory.user_id_for('memories-record-keeping.u'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Main', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('a', (select memory_id from memory.remember('Plays the cello', 'fact', tests.recall('u')::uuid, p_category => 'music')));

-- updated_at moves on a pin (the trigger), and stays where an explicit write puts it (the table
-- owner's: no API role writes updated_at).
select tests.clear_authentication();
update memory.memories set updated_at = now() - interval '1 day' where id = tests.recall('a')::uuid;
select tests.authenticate_as_service_role();
select memory.pin_memory(tests.recall('a')::uuid);
select ok(
    (select updated_at > now() - interval '1 minute' from memory.memories where id = tests.recall('a')::uuid),
    'pinning moves updated_at'
);
select tests.clear_authentication();
update memory.memories set updated_at = '2020-01-01' where id = tests.recall('a')::uuid;
select is(
    (select updated_at from memory.memories where id = tests.recall('a')::uuid), '2020-01-01'::timestamptz,
    'an explicit updated_at is kept'
);
select tests.authenticate_as_service_role();

-- An empty category clears it on revision; null keeps it.
select is((memory.revise_memory(tests.recall('a')::uuid, 'Plays the cello well')).category, 'music', 'null keeps the category');
select tests.remember('b', (select id from memory.memories where content = 'Plays the cello well'));
select is((memory.revise_memory(tests.recall('b')::uuid, 'Plays the cello very well', p_category => '')).category, null, 'an empty category clears it');

-- Search: an expired memory is not 'active'.
select tests.remember('e', (select memory_id from memory.remember('Visiting Lisbon this week', 'fact', tests.recall('u')::uuid, p_expires_at => now() + interval '1 hour')));
select tests.clear_authentication();
update memory.memories set expires_at = now() - interval '1 second' where id = tests.recall('e')::uuid;
select tests.authenticate_as_service_role();
select is_empty(
    $$select 1 from memory.search_memories('Lisbon', tests.recall('u')::uuid) as m$$,
    'an expired memory is not found among active ones'
);
select isnt_empty(
    $$select 1 from memory.search_memories('Lisbon', tests.recall('u')::uuid, p_status => 'all') as m$$,
    'it is still found with status all'
);

-- Restore counts against the cap (2 here): restoring a third live memory archives the lowest.
update memory_private.settings set value = '2' where key = 'memory_cap';
select tests.remember('f', (select memory_id from memory.remember('Allergic to cats', 'fact', tests.recall('u')::uuid)));
select memory.forget(tests.recall('f')::uuid);
select tests.remember('g', (select memory_id from memory.remember('Learning Portuguese', 'goal', tests.recall('u')::uuid)));
select memory.restore_memory(tests.recall('f')::uuid);
select is(
    (select count(*)::integer from memory.memories
     where user_id = tests.recall('u')::uuid and active and not archived and deleted_at is null
        and (expires_at is null or expires_at > now())),
    2, 'after a restore the live memories are back within the cap (the expired one does not count)'
);

-- Settings travel with an export; an import restores the opt-in and never un-pauses.
select memory.set_memory_settings(p_memory_paused => true, p_long_term_opt_in => true, p_user_id => tests.recall('u')::uuid);
select tests.remember('export', memory.export_memories(tests.recall('u')::uuid));
select is(
    tests.recall('export')::jsonb -> 'settings', '{"memory_paused": true, "long_term_opt_in": true}'::jsonb,
    'the export carries the memory settings'
);
select memory.erase_user(tests.recall('u')::uuid);
select tests.remember('u2', memory.user_id_for('memories-record-keeping.u'));
select memory.import_memories(tests.recall('export')::jsonb, tests.recall('u2')::uuid);
select results_eq(
    $$select memory_paused, long_term_opt_in from memory.users where id = tests.recall('u2')::uuid$$,
    $$values (true, true)$$,
    'an import brings the settings back'
);
select memory.set_memory_settings(p_memory_paused => true, p_user_id => tests.recall('u2')::uuid);
select memory.import_memories(
    jsonb_set(tests.recall('export')::jsonb, '{settings,memory_paused}', 'false'), tests.recall('u2')::uuid
);
select is(
    (select memory_paused from memory.users where id = tests.recall('u2')::uuid), true,
    'an import never un-pauses memory'
);

select * from finish();
rollback;
