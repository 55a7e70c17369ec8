-- Why: the monthly cron job: months whose last week has ended in the profile's time zone, that
-- have weekly summaries and no monthly summary yet; a month whose job died is queued again an hour
-- later (memory_private.died_an_hour_ago).
create function memory_private.enqueue_due_monthly_summaries(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.enqueue_due_monthly_summaries(timestamp with time zone)
from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_due_monthly_summaries(timestamp with time zone) to service_role;
