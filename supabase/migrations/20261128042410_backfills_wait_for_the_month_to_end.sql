-- A backfill waits for the month's last week to end locally, as the monthly scheduler does
-- (memory_private.month_end, one rule for both): a week still going or to come is no longer summarised
-- from part of it, and the month not written for good from those.
set check_function_bodies = off;

create or replace function memory_private.month_end(p_month_start date)
returns date
language plpgsql
immutable
set search_path to ''
as $function$
begin
    return date_trunc('week', (p_month_start + interval '1 month')::date - 4)::date + 7;
end
$function$;

create or replace function memory_private.backfill_month(
    p_profile_id uuid, p_year integer, p_month integer, p_regenerate boolean
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_profile memory.profiles;
    v_month_start date;
    v_end date;
    v_week date;
    v_count integer := 0;
begin
    if p_year is null or p_month is null or p_month not between 1 and 12 or p_year not between 1970 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range';
    end if;
    select p.* into v_profile from memory.profiles as p where p.id = p_profile_id;
    -- A signed-in user backfills only their own profiles (another's is not found); otherwise the
    -- caller must be the service role (memory_scope raises 42501).
    if not found or v_profile.user_id is distinct from coalesce(memory_private.memory_scope(), v_profile.user_id) then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    v_month_start := make_date(p_year, p_month, 1);
    -- Only a month whose last week has ended locally, as its scheduler waits for: a week still
    -- going was summarised from its first days, a week to come completed as skipped under the key
    -- its scheduler uses (so never queued when it ended), and the month written from both, for
    -- good, since the schedulers queue only what has no summary.
    v_end := memory_private.month_end(v_month_start);
    if v_end > (now() at time zone v_profile.timezone)::date then
        raise exception using errcode = '22023',
            message = format('the month is not over yet: its last week ends on %s', v_end - 1);
    end if;
    -- Weeks whose Thursday falls in the month.
    for v_week in
        select d::date from generate_series(
            date_trunc('week', v_month_start)::date, (v_month_start + interval '1 month')::date, interval '7 days'
        ) as d
        where date_trunc('month', d::date + 3) = v_month_start
    loop
        if (p_regenerate or not exists (
            select 1 from memory.weekly_summaries as w where w.profile_id = p_profile_id and w.week_start_date = v_week
        )) and memory_private.enqueue(
            'summarize_week', jsonb_build_object('profile_id', p_profile_id, 'week_start', v_week),
            format('week:%s:%s', p_profile_id, v_week), v_profile.user_id, null, true
        ) is not null then
            v_count := v_count + 1;
        end if;
    end loop;
    if memory_private.enqueue(
        'summarize_month', jsonb_build_object('profile_id', p_profile_id, 'month_start', v_month_start),
        format('month:%s:%s', p_profile_id, to_char(v_month_start, 'YYYY-MM')), v_profile.user_id, null, true
    ) is not null then
        v_count := v_count + 1;
    end if;
    return v_count;
end
$function$;

create or replace function memory_private.enqueue_due_monthly_summaries(p_now timestamp with time zone default now())
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_count integer := 0;
    v_month record;
    v_key text;
begin
    for v_month in
        select distinct w.user_id, w.profile_id, date_trunc('month', w.week_start_date + 3)::date as month_start
        from memory.weekly_summaries as w
        join memory.profiles as p on p.id = w.profile_id
        where w.week_start_date > (p_now - (memory_private.setting('summary_lookback') #>> '{}')::interval
            - interval '1 month')::date
            -- Its last week (the one holding its last Thursday) has ended locally.
            and memory_private.month_end(date_trunc('month', w.week_start_date + 3)::date)
            <= (p_now at time zone p.timezone)::date
    loop
        v_key := format('month:%s:%s', v_month.profile_id, to_char(v_month.month_start, 'YYYY-MM'));
        if not exists (
            select 1 from memory.monthly_summaries as m
            where m.user_id = v_month.user_id and m.profile_id = v_month.profile_id
                and m.year = extract(year from v_month.month_start) and m.month = extract(month from v_month.month_start)
        ) and memory_private.enqueue(
            'summarize_month',
            jsonb_build_object('profile_id', v_month.profile_id, 'month_start', v_month.month_start),
            v_key, v_month.user_id, p_replace => memory_private.died_an_hour_ago('summarize_month', v_key, p_now)
        ) is not null then
            v_count := v_count + 1;
        end if;
    end loop;
    return v_count;
end
$function$;


revoke all on function memory_private.backfill_month(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.backfill_month(uuid, integer, integer, boolean) to authenticated, service_role;
revoke all on function memory_private.enqueue_due_monthly_summaries(timestamp with time zone)
from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_due_monthly_summaries(timestamp with time zone) to service_role;
revoke all on function memory_private.month_end(date) from public, anon, authenticated, service_role;
grant execute on function memory_private.month_end(date) to authenticated, service_role;
