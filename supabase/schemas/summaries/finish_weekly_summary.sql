-- Why: the weekly summary; counts come from the data, not from the model. A week whose month is
-- summarised already (written again: a late conversation summary, a backfill) queues the month
-- again, and a month job running now is told to run again, so the month holds it; a week job told
-- to run again (a conversation summary written while it ran) is queued again once it is done.
create function memory.finish_weekly_summary(
    p_job_id bigint,
    p_worker text,
    p_emotional_summary text,
    p_key_themes text[],
    p_dominant_patterns text[],
    p_usage jsonb default null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_profile memory.profiles;
    v_week date := (v_job.payload ->> 'week_start')::date;
    -- The month holding the week's Thursday.
    v_month date := date_trunc('month', v_week + 3)::date;
    v_id uuid;
begin
    select p.* into v_profile from memory.profiles as p where p.id = (v_job.payload ->> 'profile_id')::uuid;
    insert into memory.weekly_summaries (
        user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary,
        key_themes, dominant_patterns, conversation_count
    ) values (
        v_profile.user_id, v_profile.id, extract(isoyear from v_week), extract(week from v_week), v_week, v_week + 6,
        p_emotional_summary, coalesce(p_key_themes, '{}'), coalesce(p_dominant_patterns, '{}'),
        (select count(distinct s.conversation_id) from memory.conversation_summaries as s
         where s.profile_id = v_profile.id
             and memory_private.local_week_start(s.created_at, v_profile.timezone) = v_week)
    )
    on conflict (user_id, profile_id, iso_year, week_number) do update
    set emotional_summary = excluded.emotional_summary, key_themes = excluded.key_themes,
        dominant_patterns = excluded.dominant_patterns, conversation_count = excluded.conversation_count,
        created_at = now()
    returning id into v_id;
    if exists (
        select 1 from memory.monthly_summaries as m
        where m.profile_id = v_profile.id
            and m.year = extract(year from v_month) and m.month = extract(month from v_month)
    ) then
        perform memory_private.enqueue(
            'summarize_month', jsonb_build_object('profile_id', v_profile.id, 'month_start', v_month),
            format('month:%s:%s', v_profile.id, to_char(v_month, 'YYYY-MM')), v_profile.user_id, null, true
        );
    end if;
    perform memory_private.run_again(
        'summarize_month', format('month:%s:%s', v_profile.id, to_char(v_month, 'YYYY-MM'))
    );
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('weekly_summary_id', v_id), p_usage);
    perform memory_private.ran_again(v_job);
    return v_id;
end
$$;

revoke all on function memory.finish_weekly_summary(bigint, text, text, text[], text[], jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_weekly_summary(bigint, text, text, text[], text[], jsonb) to service_role;
