-- Why: seed 004's `?action=backfill&year&month`: (re)generate one month of a profile after a missed
-- cron run: its missing weekly summaries (all with p_regenerate), then the month, which waits for
-- its weeks. For the profile's owner or the service role; the body runs as the owner because only
-- the owner writes the job queue. Returns the jobs queued.
create function memory.backfill_month(
    p_profile_id uuid, p_year integer, p_month integer, p_regenerate boolean default false
)
returns integer
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.backfill_month(p_profile_id, p_year, p_month, p_regenerate);
end
$$;

revoke all on function memory.backfill_month(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory.backfill_month(uuid, integer, integer, boolean) to service_role, authenticated;

-- Why: queue the weekly and monthly summaries of one month of one profile (seed 004's
-- ?action=backfill), for its owner or the service role; a missing year or month is out of range
-- and a month not over yet refused (22023), never a job for a null month.
create function memory_private.backfill_month(
    p_profile_id uuid, p_year integer, p_month integer, p_regenerate boolean
)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.backfill_month(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.backfill_month(uuid, integer, integer, boolean) to authenticated, service_role;

-- Why: seed 004's backfill after a cron outage longer than the schedulers look back
-- (summary_lookback): the month of every profile that had conversations in it (conversation
-- summaries written in its weeks, as the weekly scheduler reads them), each as backfill_month
-- queues it; a profile whose month is not over yet in its time zone is left for its scheduler.
-- The service role's alone. Returns the jobs queued.
create function memory.backfill_month_for_all(p_year integer, p_month integer, p_regenerate boolean default false)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_month_start date;
    v_profile record;
    v_count integer := 0;
begin
    if p_year is null or p_month is null or p_month not between 1 and 12 or p_year not between 1970 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range';
    end if;
    v_month_start := make_date(p_year, p_month, 1);
    for v_profile in
        select distinct p.id, p.timezone
        from memory.conversation_summaries as s
        join memory.profiles as p on p.id = s.profile_id
        -- A day either side of the month's weeks (in UTC) holds them in every time zone; the
        -- profile's own weeks decide.
        where s.created_at >= (date_trunc('week', v_month_start::timestamp) - interval '1 day') at time zone 'UTC'
            and s.created_at < (memory_private.month_end(v_month_start) + interval '1 day') at time zone 'UTC'
            and date_trunc('month', memory_private.local_week_start(s.created_at, p.timezone) + 3) = v_month_start
        order by p.id
    loop
        if memory_private.month_end(v_month_start) <= (now() at time zone v_profile.timezone)::date then
            v_count := v_count + memory_private.backfill_month(v_profile.id, p_year, p_month, p_regenerate);
        end if;
    end loop;
    return v_count;
end
$$;

revoke all on function memory.backfill_month_for_all(integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory.backfill_month_for_all(integer, integer, boolean) to service_role;
