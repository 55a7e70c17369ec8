-- Why: the weekly cron job. For every user and profile with conversation summaries in a
-- week that has ended in the profile's time zone and has no weekly summary yet, queue one. A
-- missed run heals itself: the next run finds the same gap (up to summary_lookback back), and a
-- week whose job died is queued again an hour later (memory_private.died_an_hour_ago).
create function memory_private.enqueue_due_weekly_summaries(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_count integer := 0;
    v_week record;
    v_key text;
begin
    for v_week in
        select distinct s.user_id, s.profile_id, memory_private.local_week_start(s.created_at, p.timezone) as week_start
        from memory.conversation_summaries as s
        join memory.profiles as p on p.id = s.profile_id and p.user_id = s.user_id
        where s.created_at > p_now - (memory_private.setting('summary_lookback') #>> '{}')::interval
            and s.created_at <= p_now
            and memory_private.local_week_start(s.created_at, p.timezone) + 7 <= (p_now at time zone p.timezone)::date
    loop
        v_key := format('week:%s:%s', v_week.profile_id, v_week.week_start);
        if not exists (
            select 1 from memory.weekly_summaries as w
            where w.user_id = v_week.user_id and w.profile_id = v_week.profile_id
                and w.week_start_date = v_week.week_start
        ) and memory_private.enqueue(
            'summarize_week',
            jsonb_build_object('profile_id', v_week.profile_id, 'week_start', v_week.week_start),
            v_key, v_week.user_id, p_replace => memory_private.died_an_hour_ago('summarize_week', v_key, p_now)
        ) is not null then
            v_count := v_count + 1;
        end if;
    end loop;
    return v_count;
end
$$;

revoke all on function memory_private.enqueue_due_weekly_summaries(timestamp with time zone)
from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_due_weekly_summaries(timestamp with time zone) to service_role;
