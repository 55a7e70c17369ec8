-- A conversation summary written after its week was summarised (its job late past the week's end,
-- or regenerated) queues the week again, and a week written after its month was summarised queues
-- the month again; a week or month job running meanwhile, which read its input before, runs again
-- once it is done: a late summary reaches its week and month instead of being left out for good,
-- and a month written again drops the year-over-year comparisons made from it (one being made
-- then runs again).
begin;
select plan(13);

select tests.create_cast('summaries-late');
with p as (
    insert into memory.profiles (user_id, name, is_primary, timezone)
    values (tests.recall('owner')::uuid, 'Main', true, 'UTC') returning id
)
select tests.remember('profile', id) from p;
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, null, 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select memory.add_turn(tests.recall('conv')::uuid, format('Question %s', i), format('Answer %s', i)) from generate_series(1, 8) as i;
-- Turns 1-4 in the week of Monday 2 March 2026, turns 5-8 in the week after.
update memory.messages
set created_at = case when turn_number <= 4 then timestamptz '2026-03-03 10:00Z' else timestamptz '2026-03-10 10:00Z' end
where conversation_id = tests.recall('conv')::uuid;
-- The week of 2 March and March are summarised already; the week of 9 March is not.
insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('profile')::uuid, 2026, 10, '2026-03-02', '2026-03-08', 'Written without turns 1-4');
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('profile')::uuid, 2026, 3, 'Written without them either');
select memory_private.queue_pending_summaries();
delete from memory_private.jobs where user_id = tests.recall('owner')::uuid and kind not in ('summarize_conversation');
update memory_private.jobs set status = 'running', attempts = 1, worker = 'late-worker', leased_until = now() + interval '5 minutes'
where user_id = tests.recall('owner')::uuid and kind = 'summarize_conversation';

select tests.authenticate_as_service_role();
select memory.finish_conversation_summary(
    (select id from memory_private.jobs where dedup_key = 'conversation:' || tests.recall('conv') || ':8'), 'late-worker', 'Turns 5-8'
);
select is_empty(
    $$select 1 from memory_private.jobs where kind = 'summarize_week' and user_id = tests.recall('owner')::uuid$$,
    'a summary of a week not summarised yet queues nothing: its scheduler will'
);
select memory.finish_conversation_summary(
    (select id from memory_private.jobs where dedup_key = 'conversation:' || tests.recall('conv') || ':4'), 'late-worker', 'Turns 1-4'
);
select results_eq(
    $$select status, payload from memory_private.jobs
    where kind = 'summarize_week' and dedup_key = 'week:' || tests.recall('profile') || ':2026-03-02'$$,
    $$values ('queued', jsonb_build_object('profile_id', tests.recall('profile'), 'week_start', '2026-03-02'))$$,
    'a summary late past its summarised week queues the week again'
);
select is_empty(
    $$select 1 from memory_private.jobs where kind = 'summarize_month' and user_id = tests.recall('owner')::uuid$$,
    'the month waits for its week'
);

select tests.clear_authentication();
update memory_private.jobs set status = 'running', attempts = 1, worker = 'late-worker', leased_until = now() + interval '5 minutes'
where kind = 'summarize_week' and dedup_key = 'week:' || tests.recall('profile') || ':2026-03-02';
select tests.authenticate_as_service_role();
select memory.finish_weekly_summary(
    (select id from memory_private.jobs where dedup_key = 'week:' || tests.recall('profile') || ':2026-03-02'),
    'late-worker', 'Now with turns 1-4', '{}', '{}'
);
select is(
    (select conversation_count from memory.weekly_summaries
    where profile_id = tests.recall('profile')::uuid and week_start_date = '2026-03-02'),
    1, 'the week written again holds the late summary'
);
select results_eq(
    $$select status, payload from memory_private.jobs
    where kind = 'summarize_month' and dedup_key = 'month:' || tests.recall('profile') || ':2026-03'$$,
    $$values ('queued', jsonb_build_object('profile_id', tests.recall('profile'), 'month_start', '2026-03-01'))$$,
    'a week written again after its month was summarised queues the month again'
);

-- While the week of 9 March and March are being written (their jobs running, their inputs read),
-- turns 5-8 are summarised again.
select tests.clear_authentication();
update memory_private.jobs set status = 'running', attempts = 1, worker = 'late-worker', leased_until = now() + interval '5 minutes',
    started_at = now()
where kind = 'summarize_month' and dedup_key = 'month:' || tests.recall('profile') || ':2026-03';
select tests.remember('w2', memory_private.enqueue(
    'summarize_week', jsonb_build_object('profile_id', tests.recall('profile'), 'week_start', '2026-03-09'),
    'week:' || tests.recall('profile') || ':2026-03-09', tests.recall('owner')::uuid));
update memory_private.jobs set status = 'running', attempts = 1, worker = 'late-worker', leased_until = now() + interval '5 minutes',
    started_at = now()
where id = tests.recall('w2')::bigint or dedup_key = 'conversation:' || tests.recall('conv') || ':8';
select tests.authenticate_as_service_role();
select memory.finish_conversation_summary(
    (select id from memory_private.jobs where dedup_key = 'conversation:' || tests.recall('conv') || ':8'), 'late-worker', 'Turns 5-8 again'
);
select is(
    (select payload -> 'again' from memory_private.jobs where id = tests.recall('w2')::bigint), 'true'::jsonb,
    'a week job running when a summary of its week is written is told to run again'
);
select memory.finish_weekly_summary(tests.recall('w2')::bigint, 'late-worker', 'Without turns 5-8 again', '{}', '{}');
select results_eq(
    $$select status, payload from memory_private.jobs where id = tests.recall('w2')::bigint$$,
    $$values ('queued', jsonb_build_object('profile_id', tests.recall('profile'), 'week_start', '2026-03-09'))$$,
    'and is queued again once it is done, without the flag'
);
select is(
    (select payload -> 'again' from memory_private.jobs
    where kind = 'summarize_month' and dedup_key = 'month:' || tests.recall('profile') || ':2026-03'),
    'true'::jsonb, 'a month job running when a week of it is written is told to run again'
);
-- Year-over-year comparisons made from March as it was: with March 2025 and with March 2027.
insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
select tests.recall('owner')::uuid, tests.recall('profile')::uuid, y, m, format('%s-%s as it was', y, m)
from (values (2026, 3), (2027, 3), (2026, 4), (2025, 3)) as c (y, m);
-- And one with March 2027 being made now, from March as it was.
select tests.clear_authentication();
select tests.remember('cmp', memory_private.enqueue(
    'compare_year', jsonb_build_object('profile_id', tests.recall('profile'), 'year', 2027, 'month', 3),
    'compare:' || tests.recall('profile') || ':2027-3', tests.recall('owner')::uuid));
update memory_private.jobs set status = 'running', attempts = 1, worker = 'late-worker', leased_until = now() + interval '5 minutes',
    started_at = now()
where id = tests.recall('cmp')::bigint;
select tests.authenticate_as_service_role();
select memory.finish_monthly_summary(
    (select id from memory_private.jobs where kind = 'summarize_month' and dedup_key = 'month:' || tests.recall('profile') || ':2026-03'),
    'late-worker', 'March', 'Thinking', '{}'
);
select is(
    (select payload -> 'again' from memory_private.jobs where id = tests.recall('cmp')::bigint), 'true'::jsonb,
    'a comparison job running when a month of it is written is told to run again'
);
select memory.finish_year_comparison(tests.recall('cmp')::bigint, 'late-worker', 'From March as it was');
select results_eq(
    $$select status, payload from memory_private.jobs where id = tests.recall('cmp')::bigint$$,
    $$values ('queued', jsonb_build_object('profile_id', tests.recall('profile'), 'year', 2027, 'month', 3))$$,
    'and is queued again once it is done, without the flag'
);
select is(
    (select count(*)::int from memory_private.jobs where kind = 'compare_year' and user_id = tests.recall('owner')::uuid
    and payload -> 'again' is not null), 0, 'no other comparison was told to run again'
);
select results_eq(
    $$select year::int, month::int from memory.yearly_comparisons where profile_id = tests.recall('profile')::uuid
    order by 1, 2$$,
    $$values (2025, 3), (2026, 4), (2027, 3)$$,
    'the comparisons made from the month written again are gone (made again: on the next view, or by the job run again)'
);
select results_eq(
    $$select status, payload from memory_private.jobs
    where kind = 'summarize_month' and dedup_key = 'month:' || tests.recall('profile') || ':2026-03'$$,
    $$values ('queued', jsonb_build_object('profile_id', tests.recall('profile'), 'month_start', '2026-03-01'))$$,
    'and is queued again once it is done'
);

select * from finish();
rollback;
