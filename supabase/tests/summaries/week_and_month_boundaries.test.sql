-- Weeks and months are cut in the profile's time zone: a week is Monday 00:00 to Sunday 24:00
-- local (ISO), a month holds the weeks whose Thursday falls in it. The weekly scheduler queues a
-- week once it has ended locally, once, and catches up on missed runs (within summary_lookback);
-- the monthly one queues a month once its last week has ended locally. backfill_month queues a
-- month's weeks and the month; compare_year answers 'unavailable', 'queued' or 'ready'.
--
-- All instants are written in UTC with their local time beside them. The schedulers scan every
-- user, so assertions look at this file's profiles' jobs only; a second run returning 0 holds for
-- everyone, since the first run queued whatever was due.
begin;
select plan(38);

update memory_private.settings set value = '"8 weeks"' where key = 'summary_lookback';
update memory_private.settings set value = '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year"]' where key = 'job_kinds';
select tests.create_cast('summaries-boundaries');
with p as (
    insert into memory.profiles (user_id, name, is_primary, timezone)
    values (tests.recall('owner')::uuid, 'Auckland', true, 'Pacific/Auckland') returning id
)
select tests.remember('akl', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary, timezone)
    values (tests.recall('owner')::uuid, 'Los Angeles', false, 'America/Los_Angeles') returning id
)
select tests.remember('lax', id) from p;
select tests.remember('akl_conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Auckland chat', 'profile', tests.recall('akl')::uuid, p_window_turns => 1000)).id);
select tests.remember('lax_conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'LA chat', 'profile', tests.recall('lax')::uuid, p_window_turns => 1000)).id);

-------------------------------------------------------------------------------------------------
-- local_week_start around the DST changes.
-------------------------------------------------------------------------------------------------
-- Auckland, DST ends Sunday 5 April 2026 03:00 (NZDT +13 -> NZST +12).
select is(memory_private.local_week_start('2026-04-05 11:30Z', 'Pacific/Auckland'), date '2026-03-30',
    'Auckland, Sunday 5 April 23:30 NZST belongs to the week of Monday 30 March');
select is(memory_private.local_week_start('2026-04-05 12:30Z', 'Pacific/Auckland'), date '2026-04-06',
    'Auckland, Monday 6 April 00:30 NZST starts the week of 6 April');
-- Auckland, DST starts Sunday 27 September 2026 02:00 (NZST +12 -> NZDT +13).
select is(memory_private.local_week_start('2026-09-27 10:30Z', 'Pacific/Auckland'), date '2026-09-21',
    'Auckland, Sunday 27 September 23:30 NZDT belongs to the week of Monday 21 September');
select is(memory_private.local_week_start('2026-09-27 11:30Z', 'Pacific/Auckland'), date '2026-09-28',
    'Auckland, Monday 28 September 00:30 NZDT starts the week of 28 September');
-- Los Angeles, DST starts Sunday 8 March 2026 02:00 (PST -8 -> PDT -7).
select is(memory_private.local_week_start('2026-03-09 06:30Z', 'America/Los_Angeles'), date '2026-03-02',
    'Los Angeles, Sunday 8 March 23:30 PDT belongs to the week of Monday 2 March');
select is(memory_private.local_week_start('2026-03-09 07:30Z', 'America/Los_Angeles'), date '2026-03-09',
    'Los Angeles, Monday 9 March 00:30 PDT starts the week of 9 March');
-- Los Angeles, DST ends Sunday 1 November 2026 02:00 (PDT -7 -> PST -8).
select is(memory_private.local_week_start('2026-11-02 07:30Z', 'America/Los_Angeles'), date '2026-10-26',
    'Los Angeles, Sunday 1 November 23:30 PST belongs to the week of Monday 26 October');
select is(memory_private.local_week_start('2026-11-02 08:30Z', 'America/Los_Angeles'), date '2026-11-02',
    'Los Angeles, Monday 2 November 00:30 PST starts the week of 2 November');
-- The same instant, two zones; and the session's time zone plays no part.
select is(memory_private.local_week_start('2026-04-05 12:30Z', 'America/Los_Angeles'), date '2026-03-30',
    'the instant that starts a week in Auckland is still the week before in Los Angeles');
set local timezone = 'Asia/Tokyo';
select is(memory_private.local_week_start('2026-11-02 07:30Z', 'America/Los_Angeles'), date '2026-10-26',
    'the week start does not depend on the session time zone');
set local timezone = 'UTC';

-------------------------------------------------------------------------------------------------
-- enqueue_due_weekly_summaries(p_now).
-------------------------------------------------------------------------------------------------
insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at) values
-- Too old: before p_now - summary_lookback (8 weeks before 5 April is 8 February).
(tests.recall('akl_conv')::uuid, tests.recall('owner')::uuid, tests.recall('akl')::uuid, 1, 4, 'Too old', '2026-02-03 00:00Z'),
-- The week of 9 March, whose scheduled run was missed.
(tests.recall('akl_conv')::uuid, tests.recall('owner')::uuid, tests.recall('akl')::uuid, 5, 8, 'Missed week', '2026-03-11 00:00Z'),
-- The week of 16 March, already summarised.
(tests.recall('akl_conv')::uuid, tests.recall('owner')::uuid, tests.recall('akl')::uuid, 9, 12, 'Done week', '2026-03-18 00:00Z'),
-- Sunday 5 April 23:30 NZST, the last half hour of the week of 30 March.
(tests.recall('akl_conv')::uuid, tests.recall('owner')::uuid, tests.recall('akl')::uuid, 13, 16, 'Late Sunday', '2026-04-05 11:30Z'),
-- Los Angeles, Sunday 1 November 23:30 PST, the week of 26 October.
(tests.recall('lax_conv')::uuid, tests.recall('owner')::uuid, tests.recall('lax')::uuid, 1, 4, 'Late Sunday LA', '2026-11-02 07:30Z');
insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 12, '2026-03-16', '2026-03-22', 'Already summarised.');

-- Sunday 5 April 23:59 NZST: the week of 30 March has not ended; the missed week is caught up.
select memory_private.enqueue_due_weekly_summaries('2026-04-05 11:59Z');
select results_eq(
    $$select payload ->> 'week_start', dedup_key, user_id from memory_private.jobs
    where kind = 'summarize_week' and payload ->> 'profile_id' = tests.recall('akl') order by id$$,
    $$values ('2026-03-09', 'week:' || tests.recall('akl') || ':2026-03-09', tests.recall('owner')::uuid)$$,
    'at Sunday 23:59 local: only the missed week is queued (not the running week, the summarised one or one past the lookback)'
);
-- Monday 6 April 00:01 NZST: now it has.
select memory_private.enqueue_due_weekly_summaries('2026-04-05 12:01Z');
select results_eq(
    $$select payload ->> 'week_start' from memory_private.jobs
    where kind = 'summarize_week' and payload ->> 'profile_id' = tests.recall('akl') order by id$$,
    $$values ('2026-03-09'), ('2026-03-30')$$,
    'at Monday 00:01 local the week that just ended is queued'
);
select is(memory_private.enqueue_due_weekly_summaries('2026-04-05 12:01Z'), 0, 'a second run queues nothing');
select results_eq(
    $$select count(*)::integer from memory_private.jobs where kind = 'summarize_week' and payload ->> 'profile_id' = tests.recall('akl')$$,
    array[2],
    'each week is queued once'
);
-- Los Angeles, the week DST ends.
select memory_private.enqueue_due_weekly_summaries('2026-11-02 07:59Z');
select is_empty(
    $$select id from memory_private.jobs where kind = 'summarize_week' and payload ->> 'profile_id' = tests.recall('lax')$$,
    'Los Angeles, Sunday 1 November 23:59 PST: the week of 26 October is not due'
);
select memory_private.enqueue_due_weekly_summaries('2026-11-02 08:01Z');
select results_eq(
    $$select payload ->> 'week_start' from memory_private.jobs where kind = 'summarize_week' and payload ->> 'profile_id' = tests.recall('lax')$$,
    $$values ('2026-10-26')$$,
    'Los Angeles, Monday 2 November 00:01 PST: the week of 26 October is queued'
);

-------------------------------------------------------------------------------------------------
-- enqueue_due_monthly_summaries(p_now): October 2026's last week (26 October - 1 November, with
-- Thursday 29 October) ends at the start of Monday 2 November local.
-------------------------------------------------------------------------------------------------
insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary) values
(tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 41, '2026-10-05', '2026-10-11', 'Auckland October week.'),
(tests.recall('owner')::uuid, tests.recall('lax')::uuid, 2026, 41, '2026-10-05', '2026-10-11', 'LA October week.'),
(tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 37, '2026-09-07', '2026-09-13', 'Auckland September week.');
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 9, 'September, already summarised.');

-- Sunday 1 November 23:59 NZDT (+13).
select memory_private.enqueue_due_monthly_summaries('2026-11-01 10:59Z');
select is_empty(
    $$select id from memory_private.jobs where kind = 'summarize_month'
    and payload ->> 'profile_id' in (tests.recall('akl'), tests.recall('lax'))$$,
    'on 1 November local (Auckland 23:59) October is not due anywhere'
);
-- Monday 2 November 00:01 NZDT; still Sunday 1 November 03:01 PST in Los Angeles.
select memory_private.enqueue_due_monthly_summaries('2026-11-01 11:01Z');
select results_eq(
    $$select payload ->> 'profile_id', payload ->> 'month_start', dedup_key from memory_private.jobs
    where kind = 'summarize_month' and payload ->> 'profile_id' in (tests.recall('akl'), tests.recall('lax'))$$,
    $$values (tests.recall('akl'), '2026-10-01', 'month:' || tests.recall('akl') || ':2026-10')$$,
    'on 2 November 00:01 in Auckland, Auckland''s October is queued and Los Angeles'' is not'
);
-- Sunday 1 November 23:59 PST, then Monday 2 November 00:01 PST.
select memory_private.enqueue_due_monthly_summaries('2026-11-02 07:59Z');
select is_empty(
    $$select id from memory_private.jobs where kind = 'summarize_month' and payload ->> 'profile_id' = tests.recall('lax')$$,
    'Los Angeles, 1 November 23:59 PST: October is not due'
);
select memory_private.enqueue_due_monthly_summaries('2026-11-02 08:01Z');
select results_eq(
    $$select payload ->> 'month_start' from memory_private.jobs where kind = 'summarize_month' and payload ->> 'profile_id' = tests.recall('lax')$$,
    $$values ('2026-10-01')$$,
    'Los Angeles, 2 November 00:01 PST: October is queued'
);
select is(memory_private.enqueue_due_monthly_summaries('2026-11-02 08:01Z'), 0, 'a second monthly run queues nothing');
select results_eq(
    $$select payload ->> 'profile_id', payload ->> 'month_start' from memory_private.jobs
    where kind = 'summarize_month' and payload ->> 'profile_id' in (tests.recall('akl'), tests.recall('lax'))
    order by payload ->> 'profile_id' = tests.recall('lax')$$,
    $$values (tests.recall('akl'), '2026-10-01'), (tests.recall('lax'), '2026-10-01')$$,
    'one October job per profile, and none for a September that has its summary'
);

-------------------------------------------------------------------------------------------------
-- backfill_month: May 2026 holds the weeks of 4, 11, 18 and 25 May (27 April's Thursday is in
-- April, 1 June's in June).
-------------------------------------------------------------------------------------------------
insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 20, '2026-05-11', '2026-05-17', 'Mid May.');
select tests.authenticate_as_service_role();
select is(memory.backfill_month(tests.recall('akl')::uuid, 2026, 5), 4, 'backfill queues the three missing weeks and the month');
select results_eq(
    $$select kind, coalesce(payload ->> 'week_start', payload ->> 'month_start'), status from memory_private.jobs
    where kind in ('summarize_week', 'summarize_month') and payload ->> 'profile_id' = tests.recall('akl')
        and coalesce(payload ->> 'week_start', payload ->> 'month_start') between '2026-04-27' and '2026-06-01'
    order by 1 desc, 2$$,
    $$values ('summarize_week', '2026-05-04', 'queued'), ('summarize_week', '2026-05-18', 'queued'),
        ('summarize_week', '2026-05-25', 'queued'), ('summarize_month', '2026-05-01', 'queued')$$,
    'the weeks whose Thursday is in May (not the summarised one) and the month'
);
select is(memory.backfill_month(tests.recall('akl')::uuid, 2026, 5), 0, 'backfilling again while they wait queues nothing');
-- The jobs ran.
select tests.clear_authentication();
update memory_private.jobs set status = 'done', attempts = 1, finished_at = now()
where kind in ('summarize_week', 'summarize_month') and payload ->> 'profile_id' = tests.recall('akl')
    and coalesce(payload ->> 'week_start', payload ->> 'month_start') between '2026-04-27' and '2026-06-01';
select tests.authenticate_as_service_role();
select is(
    memory.backfill_month(tests.recall('akl')::uuid, 2026, 5, p_regenerate => true), 5,
    'p_regenerate queues all four weeks (done ones again) and the month'
);
select results_eq(
    $$select count(*)::integer, count(*) filter (where status = 'queued' and attempts = 0)::integer from memory_private.jobs
    where kind in ('summarize_week', 'summarize_month') and payload ->> 'profile_id' = tests.recall('akl')
        and coalesce(payload ->> 'week_start', payload ->> 'month_start') between '2026-04-27' and '2026-06-01'$$,
    $$values (5, 5)$$,
    'regenerating reuses the done jobs: five jobs, all queued afresh'
);
select throws_ok(
    $$select memory.backfill_month(tests.recall('akl')::uuid, 2026, 13)$$, '22023', null, 'month 13 is refused'
);
select throws_ok(
    $$select memory.backfill_month(gen_random_uuid(), 2026, 5)$$, 'P0002', null, 'an unknown profile is not found'
);

-------------------------------------------------------------------------------------------------
-- compare_year, as the signed-in owner.
-------------------------------------------------------------------------------------------------
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    memory.compare_year(tests.recall('akl')::uuid, 2026, 10) ->> 'status', 'unavailable',
    'without monthly summaries the comparison is unavailable'
);
select tests.clear_authentication();
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 10, 'October 2026.');
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    memory.compare_year(tests.recall('akl')::uuid, 2026, 10) ->> 'status', 'unavailable',
    'with only this year''s month it is still unavailable'
);
select tests.clear_authentication();
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2025, 10, 'October 2025.');
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.compare_year(tests.recall('akl')::uuid, 2026, 10), '{"status": "queued"}'::jsonb, 'with both months the owner''s request is queued');
select is(memory.compare_year(tests.recall('akl')::uuid, 2026, 10), '{"status": "queued"}'::jsonb, 'asking again: still queued');
select tests.clear_authentication();
select results_eq(
    $$select dedup_key, user_id, payload from memory_private.jobs where kind = 'compare_year' and user_id = tests.recall('owner')::uuid$$,
    $$values ('compare:' || tests.recall('akl') || ':2026-10', tests.recall('owner')::uuid,
        jsonb_build_object('profile_id', tests.recall('akl')::uuid, 'year', 2026, 'month', 10))$$,
    'one compare_year job for the owner''s profile, year and month'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.compare_year(tests.recall('akl')::uuid, 2026, 10)$$, 'P0002', null,
    'a stranger asking about the owner''s profile: not found'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.compare_year(tests.recall('akl')::uuid, 2026, 10)$$, 'P0002', null,
    'the tenant admin cannot queue a comparison for the owner''s profile'
);
select tests.clear_authentication();
insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2026, 10, 'Much like last year.');
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    memory.compare_year(tests.recall('akl')::uuid, 2026, 10),
    '{"status": "ready", "comparison": "Much like last year."}'::jsonb,
    'once stored, the comparison is ready'
);

-- When the comparison's job has died, asking again queues it again (the dead job's key is
-- replaced), so 'queued' is true and the app does not wait forever.
select tests.clear_authentication();
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('akl')::uuid, 2025, 9, 'September 2025.');
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.compare_year(tests.recall('akl')::uuid, 2026, 9);
select tests.clear_authentication();
update memory_private.jobs set status = 'dead', attempts = max_attempts, last_error = 'provider down', failed_at = now(), finished_at = now()
where kind = 'compare_year' and dedup_key = 'compare:' || tests.recall('akl') || ':2026-9';
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('after_dead', memory.compare_year(tests.recall('akl')::uuid, 2026, 9));
select tests.clear_authentication();
select ok(
    tests.recall('after_dead')::jsonb ->> 'status' <> 'queued' or exists (
        select 1 from memory_private.jobs
        where kind = 'compare_year' and dedup_key = 'compare:' || tests.recall('akl') || ':2026-9' and status in ('queued', 'running')
    ),
    'compare_year answers ''queued'' only when a comparison job is really queued or running'
);

select * from finish();
rollback;
