-- Why: seed 004's monthly summary, composed from the month's weekly summaries (not raw memories),
-- written under the job's lease and completed in the same transaction; regenerating replaces it.
-- Counts (conversations, weeks used) come from the data, not from the model. A month job told to
-- run again (a week written while it ran) is queued again once it is done. A month written again
-- drops the year-over-year comparisons made from it (with the year before and the year after), and
-- tells a comparison job running from it to run again.
create function memory.finish_monthly_summary(
    p_job_id bigint,
    p_worker text,
    p_emotional_summary text,
    p_cognitive_summary text,
    p_key_themes text[],
    p_context jsonb default '{}',
    p_usage jsonb default null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_profile memory.profiles;
    v_month date := (v_job.payload ->> 'month_start')::date;
    v_id uuid;
begin
    select p.* into v_profile from memory.profiles as p where p.id = (v_job.payload ->> 'profile_id')::uuid;
    insert into memory.monthly_summaries (
        user_id, profile_id, year, month, emotional_summary, cognitive_summary, key_themes, context,
        conversation_count, weekly_summaries_used
    )
    select v_profile.user_id, v_profile.id, extract(year from v_month), extract(month from v_month),
        p_emotional_summary, p_cognitive_summary, coalesce(p_key_themes, '{}'), coalesce(p_context, '{}'),
        coalesce(sum(w.conversation_count), 0), count(w.id)
    from memory.weekly_summaries as w
    where w.profile_id = v_profile.id and date_trunc('month', w.week_start_date + 3)::date = v_month
    on conflict (user_id, profile_id, year, month) do update
    set emotional_summary = excluded.emotional_summary, cognitive_summary = excluded.cognitive_summary,
        key_themes = excluded.key_themes, context = excluded.context,
        conversation_count = excluded.conversation_count, weekly_summaries_used = excluded.weekly_summaries_used,
        created_at = now()
    returning id into v_id;
    -- The comparisons composed from the month as it was are out of date: the next view composes them
    -- again, and one being composed now runs again. The job is told first: its row lock waits for a
    -- finish in flight, whose comparison the delete then sees.
    perform memory_private.run_again(
        'compare_year',
        format('compare:%s:%s-%s', v_profile.id, extract(year from v_month) + y, extract(month from v_month))
    )
    from generate_series(0, 1) as y;
    delete from memory.yearly_comparisons as y
    where y.profile_id = v_profile.id and y.month = extract(month from v_month)
        and y.year in (extract(year from v_month), extract(year from v_month) + 1);
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('monthly_summary_id', v_id), p_usage);
    perform memory_private.ran_again(v_job);
    return v_id;
end
$$;

revoke all on function memory.finish_monthly_summary(bigint, text, text, text, text[], jsonb, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_monthly_summary(bigint, text, text, text, text[], jsonb, jsonb) to service_role;
