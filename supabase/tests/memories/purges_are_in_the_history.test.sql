-- A memory that leaves the table for good appends a 'purge' event to its history (20261123001010):
-- the retention purge, a profile deleted by its user (its memories cascade) and the table owner's
-- direct delete each record the last content, whether it had been soft-deleted first, and the
-- actor. Erasing the user is the exception: the history goes with the user, and the erasure still
-- works. Nobody but the owner and their tenant admin reads these events.
begin;
select plan(9);

select tests.create_cast('memories-purge-history');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Side', false) returning id)
select tests.remember('q', id) from p;

select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('old', (select memory_id from memory.remember('I had a goldfish', 'fact')));
select tests.remember('side', (select memory_id from memory.remember('Side profile likes chess', 'preference', p_profile_id => tests.recall('q')::uuid)));
select tests.remember('fix', (select memory_id from memory.remember('Recorded by mistake', 'fact')));
select tests.remember('kept', (select memory_id from memory.remember('I play the piano', 'fact')));
select memory.forget(tests.recall('old')::uuid);

-- The retention purge (pg_cron runs it as the table owner).
select tests.clear_authentication();
update memory.memories set deleted_at = now() - interval '40 days' where id = tests.recall('old')::uuid;
select is(memory_private.purge_deleted_memories(), 1, 'the purge removes the memory deleted 40 days ago');
select results_eq(
    $$select event, old_content, new_content, (details ->> 'deleted_at')::timestamptz < now() - interval '30 days',
        actor_id, actor_role
    from memory.memory_events where memory_id = tests.recall('old')::uuid order by id desc limit 1$$,
    $$values ('purge', 'I had a goldfish', null::text, true, null::uuid, session_user::text collate "default")$$,
    'purge: the last content, when it was deleted, the purging role'
);
select results_eq(
    $$select array_agg(event order by id) from memory.memory_events where memory_id = tests.recall('old')::uuid$$,
    $$values (array['add', 'delete', 'purge'])$$,
    'the history of a purged memory runs from add through delete to purge'
);

-- A profile deleted by its user takes its memories with it, and says so.
select tests.authenticate_as(tests.recall('owner')::uuid);
delete from memory.profiles where id = tests.recall('q')::uuid;
select results_eq(
    $$select event, old_content, details ->> 'deleted_at', details ->> 'profile_id', actor_id, actor_role
    from memory.memory_events where memory_id = tests.recall('side')::uuid and event = 'purge'$$,
    $$values ('purge', 'Side profile likes chess', null::text, tests.recall('q'), tests.recall('owner')::uuid, 'authenticated')$$,
    'deleting a profile: a purge event for each of its memories, with the user as the actor'
);

-- The table owner's repair.
select tests.clear_authentication();
delete from memory.memories where id = tests.recall('fix')::uuid;
select results_eq(
    $$select event, actor_role from memory.memory_events where memory_id = tests.recall('fix')::uuid and event = 'purge'$$,
    $$values ('purge', session_user::text collate "default")$$,
    'the table owner''s direct delete is in the history too'
);

-- Readers of the history: the owner and their tenant admin, as for every event.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.memory_events where user_id = tests.recall('owner')::uuid and event = 'purge'$$,
    'a stranger reads none of the owner''s purge events'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select count(*)::integer from memory.memory_events where user_id = tests.recall('owner')::uuid and event = 'purge'$$,
    array[3],
    'the owner''s tenant admin reads them'
);

-- Erasing the user records nothing and removes everything.
select tests.authenticate_as_service_role();
select lives_ok($$select memory.erase_user(tests.recall('owner')::uuid)$$, 'erase_user still erases a user with memories');
select is_empty(
    $$select id from memory.memory_events where user_id = tests.recall('owner')::uuid$$,
    'and leaves no history, purge events included'
);

select * from finish();
rollback;
