-- memory.conversation_summaries, weekly_summaries, monthly_summaries and yearly_comparisons: the
-- jobs (service_role) write them; the owner reads and may delete their own but never writes
-- them; the owner's tenant admin reads; strangers, other tenants and anon see nothing.
-- The four tables share their policies, so each check runs over all four
-- (`from unnest(...) as t`: one assertion per table).
begin;
select plan(60);

select tests.create_cast('rls-summaries');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('owner_profile', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Theirs', true) returning id
)
select tests.remember('stranger_profile', id) from p;
select tests.remember('owner_conv', (memory.create_conversation(
    tests.recall('owner')::uuid, 'Owner', 'profile', tests.recall('owner_profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('stranger_conv', (memory.create_conversation(
    tests.recall('stranger')::uuid, 'Stranger', 'profile', tests.recall('stranger_profile')::uuid, p_window_turns => 1000)).id);

-- One row of each table for the owner and one for the stranger (same tenant A), remembered as
-- <table>_owner and <table>_stranger.
with r as (
    insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)
    values (tests.recall('owner_conv')::uuid, tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 1, 4, 'Owner turns')
    returning id
)
select tests.remember('conversation_summaries_owner', id) from r;
with r as (
    insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)
    values (tests.recall('stranger_conv')::uuid, tests.recall('stranger')::uuid, tests.recall('stranger_profile')::uuid, 1, 4, 'Stranger turns')
    returning id
)
select tests.remember('conversation_summaries_stranger', id) from r;
with r as (
    insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
    values (tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 2026, 10, '2026-03-02', '2026-03-08', 'Owner week')
    returning id
)
select tests.remember('weekly_summaries_owner', id) from r;
with r as (
    insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
    values (tests.recall('stranger')::uuid, tests.recall('stranger_profile')::uuid, 2026, 10, '2026-03-02', '2026-03-08', 'Stranger week')
    returning id
)
select tests.remember('weekly_summaries_stranger', id) from r;
with r as (
    insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
    values (tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 2026, 3, 'Owner month')
    returning id
)
select tests.remember('monthly_summaries_owner', id) from r;
with r as (
    insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
    values (tests.recall('stranger')::uuid, tests.recall('stranger_profile')::uuid, 2026, 3, 'Stranger month')
    returning id
)
select tests.remember('monthly_summaries_stranger', id) from r;
with r as (
    insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
    values (tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 2026, 3, 'Owner comparison')
    returning id
)
select tests.remember('yearly_comparisons_owner', id) from r;
with r as (
    insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
    values (tests.recall('stranger')::uuid, tests.recall('stranger_profile')::uuid, 2026, 3, 'Stranger comparison')
    returning id
)
select tests.remember('yearly_comparisons_stranger', id) from r;

-- anon: no access at all.
select tests.authenticate_as_anon();
select throws_ok(format('select * from memory.%I', t), '42501', null, format('anon cannot read %s', t))
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select throws_ok(format('delete from memory.%I', t), '42501', null, format('anon cannot delete from %s', t))
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

-- The owner reads exactly their own row (not the stranger's), and cannot write.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    format('select id from memory.%I', t), format('values (%L::uuid)', tests.recall(t || '_owner')),
    format('the owner reads their own %s and nothing else', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select throws_ok(
    format('insert into memory.%I (user_id) values (%L)', t, tests.recall('owner')), '42501', null,
    format('the owner cannot insert into %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select throws_ok(
    format('update memory.%I set created_at = now() where id = %L', t, tests.recall(t || '_owner')), '42501', null,
    format('the owner cannot update their %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

-- A stranger of the same tenant sees and deletes nothing of the owner's.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    format('select id from memory.%I where user_id = %L', t, tests.recall('owner')),
    format('a stranger does not read the owner''s %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select is_empty(
    format('delete from memory.%I where id = %L returning id', t, tests.recall(t || '_owner')),
    format('a stranger cannot delete the owner''s %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

-- Tenant A's admin reads the tenant's rows (the owner's and the stranger's) and deletes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    format('select id from memory.%I order by id', t),
    format('select unnest(array[%L::uuid, %L::uuid]) as id order by id', tests.recall(t || '_owner'), tests.recall(t || '_stranger')),
    format('tenant A''s admin reads the tenant''s %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select is_empty(
    format('delete from memory.%I where id = %L returning id', t, tests.recall(t || '_owner')),
    format('tenant A''s admin cannot delete the owner''s %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

-- Tenant B's admin sees nothing of tenant A.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    format('select id from memory.%I where user_id in (%L, %L)', t, tests.recall('owner'), tests.recall('stranger')),
    format('tenant B''s admin does not read tenant A''s %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

-- service_role reads, writes, updates and deletes everything.
select tests.authenticate_as_service_role();
select results_eq(
    format('select count(*)::integer from memory.%I where user_id in (%L, %L)', t, tests.recall('owner'), tests.recall('stranger')),
    array[2],
    format('service_role reads every %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select lives_ok(
    $$insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)
    values (tests.recall('owner_conv')::uuid, tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 5, 8, 'Service turns')$$,
    'service_role inserts a conversation summary'
);
select lives_ok(
    $$insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
    values (tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 2026, 11, '2026-03-09', '2026-03-15', 'Service week')$$,
    'service_role inserts a weekly summary'
);
select lives_ok(
    $$insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
    values (tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 2026, 4, 'Service month')$$,
    'service_role inserts a monthly summary'
);
select lives_ok(
    $$insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
    values (tests.recall('owner')::uuid, tests.recall('owner_profile')::uuid, 2026, 4, 'Service comparison')$$,
    'service_role inserts a yearly comparison'
);
select results_eq(
    format('update memory.%I set created_at = %L where id = %L returning created_at', t, '2026-01-01 00:00Z', tests.recall(t || '_stranger')),
    $$values (timestamptz '2026-01-01 00:00Z')$$,
    format('service_role updates any %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;
select results_eq(
    format('delete from memory.%I where id = %L returning id', t, tests.recall(t || '_stranger')),
    format('values (%L::uuid)', tests.recall(t || '_stranger')),
    format('service_role deletes any %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

-- Last, the owner deletes their own.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    format('delete from memory.%I where id = %L returning id', t, tests.recall(t || '_owner')),
    format('values (%L::uuid)', tests.recall(t || '_owner')),
    format('the owner deletes their own %s', t)
)
from unnest(array['conversation_summaries', 'weekly_summaries', 'monthly_summaries', 'yearly_comparisons']) as t;

select * from finish();
rollback;
