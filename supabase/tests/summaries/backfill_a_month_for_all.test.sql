-- Seed 004's backfill after a cron outage longer than the schedulers look back: the service role
-- queues a month for every profile that had conversations in its weeks (in the profile's time
-- zone), and for no other; a profile whose month is not over yet locally is left to its
-- scheduler. Nobody else may call it: anon, the owner, a stranger and a tenant admin get 42501.
begin;
select plan(10);

select tests.create_cast('summaries-backfill-all');
update memory_private.settings set value = '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year"]'
where key = 'job_kinds';
-- Three profiles: one talked in March 2015 (UTC), one on Monday 2 March in Kiritimati (UTC+14),
-- a Sunday of February's last week in UTC, one only in April.
with p as (
    insert into memory.profiles (user_id, name, is_primary, timezone) values
    (tests.recall('owner')::uuid, 'March', true, 'UTC'),
    (tests.recall('stranger')::uuid, 'Kiritimati', true, 'Pacific/Kiritimati'),
    (tests.recall('owner')::uuid, 'April', false, 'UTC')
    returning id, name
)
select tests.remember(lower(name), id) from p;
insert into memory.conversations (id, user_id, profile_id, mode)
select gen_random_uuid(), p.user_id, p.id, 'profile' from memory.profiles as p
where p.id in (tests.recall('march')::uuid, tests.recall('kiritimati')::uuid, tests.recall('april')::uuid);
insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at)
select c.id, c.user_id, c.profile_id, 1, 2, 'Talked', case p.name
    when 'March' then timestamptz '2015-03-18 12:00Z'
    -- Monday 2 March 2015 at 05:00 in Kiritimati, Sunday 1 March in UTC.
    when 'Kiritimati' then timestamptz '2015-03-01 15:00Z'
    else timestamptz '2015-04-15 12:00Z' end
from memory.conversations as c join memory.profiles as p on p.id = c.profile_id
where p.id in (tests.recall('march')::uuid, tests.recall('kiritimati')::uuid, tests.recall('april')::uuid);
delete from memory_private.jobs where kind in ('summarize_week', 'summarize_month')
    and user_id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid);

select tests.authenticate_as_anon();
select throws_ok($$select memory.backfill_month_for_all(2015, 3)$$, '42501', null, 'anon cannot backfill for all');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select memory.backfill_month_for_all(2015, 3)$$, '42501', null, 'nor the owner');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select memory.backfill_month_for_all(2015, 3)$$, '42501', null, 'nor a stranger');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select memory.backfill_month_for_all(2015, 3)$$, '42501', null, 'nor a tenant admin');

select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.backfill_month_for_all(2015, 13)$$, '22023', 'year and month out of range', 'a month that cannot exist'
);
select is(memory.backfill_month_for_all(2015, 3), 10, 'March is queued for the two profiles that talked in it: 4 weeks and the month each');
select results_eq(
    $$select p.name, j.kind, count(*)::int from memory_private.jobs as j
    join memory.profiles as p on p.id = (j.payload ->> 'profile_id')::uuid
    where j.kind in ('summarize_week', 'summarize_month') and j.user_id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid)
    group by 1, 2 order by 1, 2$$,
    $$values ('Kiritimati'::text, 'summarize_month'::text, 1), ('Kiritimati', 'summarize_week', 4),
        ('March', 'summarize_month', 1), ('March', 'summarize_week', 4)$$,
    'the profile that talked in April only is not queued; Kiritimati''s Monday is March''s'
);
select is(memory.backfill_month_for_all(2015, 3), 0, 'a second call queues nothing again');
-- The March profile talks now too: the month of this week is not over, so it is left alone.
insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)
select c.id, c.user_id, c.profile_id, 3, 4, 'Talked again' from memory.conversations as c
where c.profile_id = tests.recall('march')::uuid;
select is(
    memory.backfill_month_for_all(
        extract(year from memory_private.local_week_start(now(), 'UTC') + 3)::integer,
        extract(month from memory_private.local_week_start(now(), 'UTC') + 3)::integer
    ), 0, 'a month still going on queues nothing, though a profile talked in it'
);
select tests.clear_authentication();
select is(
    (select count(*)::int from memory_private.jobs where kind = 'summarize_month'
    and user_id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid)), 2, 'what the calls left: the two months'
);

select * from finish();
rollback;
