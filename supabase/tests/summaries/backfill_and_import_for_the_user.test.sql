-- Seed 004's backfill and re-import are the signed-in user's too: the owner backfills a month of
-- their own profile and re-imports their own export; a stranger or another tenant's admin finds
-- no such profile and cannot import for the owner; anon can do neither; the service role does both.
-- A month not over yet (its last week, the one holding its last Thursday, still going or to
-- come in the profile's time zone) is refused (22023), as its scheduler would not queue it yet.
begin;
select plan(12);

select tests.create_cast('summaries-backfill-import');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
update memory_private.settings set value = '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year"]'
where key = 'job_kinds';

select tests.authenticate_as(tests.recall('owner')::uuid);
select cmp_ok(
    memory.backfill_month(tests.recall('profile')::uuid, 2015, 3), '>=', 5,
    'the owner backfills a month of their own profile: its weeks and the month are queued'
);
select throws_ok(
    format(
        $$select memory.backfill_month(%L, %s, %s)$$, tests.recall('profile'),
        extract(year from now() + interval '1 month'), extract(month from now() + interval '1 month')
    ),
    '22023', null, 'a month still to come is refused'
);
-- The month of the week going on now: part of its last week is still to come.
select tests.remember('going', (
    select date_trunc('month', memory_private.local_week_start(now(), p.timezone) + 3)::date
    from memory.profiles as p where p.id = tests.recall('profile')::uuid
));
select throws_ok(
    format(
        $$select memory.backfill_month(%L, %s, %s)$$, tests.recall('profile'),
        extract(year from tests.recall('going')::date), extract(month from tests.recall('going')::date)
    ),
    '22023', format('the month is not over yet: its last week ends on %s', memory_private.month_end(tests.recall('going')::date) - 1),
    'the month of the week going on now is refused, naming the day its last week ends'
);
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory_private.jobs where user_id = tests.recall('owner')::uuid
        and payload ->> 'month_start' >= tests.recall('going')),
    0, 'and nothing is queued for either'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.remember('Lived in Oslo', 'fact');
select tests.remember('export', memory.export_memories());
select tests.clear_authentication();
delete from memory.memories where user_id = tests.recall('owner')::uuid;  -- the table owner's hand
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    memory.import_memories(tests.recall('export')::jsonb), 1, 'the owner re-imports their own export'
);
select results_eq(
    $$select content from memory.search_memories()$$, array['Lived in Oslo'], 'and has the memory back'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.backfill_month(tests.recall('profile')::uuid, 2015, 4)$$,
    'P0002', 'profile not found', 'a stranger finds no such profile'
);
select throws_ok(
    $$select memory.import_memories('{"format": "supamem.memories", "version": 1, "memories": []}', tests.recall('owner')::uuid)$$,
    '42501', 'a signed-in user imports only for themselves', 'a stranger cannot import for the owner'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.backfill_month(tests.recall('profile')::uuid, 2015, 4)$$,
    'P0002', 'profile not found', 'the owner''s tenant admin reads, but does not queue work for the owner'
);
select tests.authenticate_as_anon();
select throws_ok(
    $$select memory.backfill_month(tests.recall('profile')::uuid, 2015, 4)$$, '42501', null, 'anon cannot backfill'
);
select throws_ok(
    $$select memory.import_memories('{}')$$, '42501', null, 'anon cannot import'
);
select tests.authenticate_as_service_role();
select cmp_ok(
    memory.backfill_month(tests.recall('profile')::uuid, 2015, 4), '>=', 5, 'the service role backfills any profile'
);

select * from finish();
rollback;
