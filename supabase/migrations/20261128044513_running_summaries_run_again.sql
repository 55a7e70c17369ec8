-- A week or month job running when a conversation summary (or a week) of it is written is told to run
-- again (memory_private.run_again) and queued again once it is done (memory_private.ran_again): it had
-- read its input already, and the summary was left out of it for good.
set check_function_bodies = off;

create or replace function memory_private.ran_again(p_job memory_private.jobs)
returns void
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if (p_job.payload ->> 'again')::boolean then
        perform memory_private.enqueue(p_job.kind, p_job.payload - 'again', p_job.dedup_key, p_job.user_id, null, true);
    end if;
end
$function$;

create or replace function memory_private.run_again(p_kind text, p_dedup_key text)
returns void
language plpgsql
security definer
set search_path to ''
as $function$
begin
    update memory_private.jobs as j
    set payload = j.payload || '{"again": true}'
    where j.kind = p_kind and j.dedup_key = p_dedup_key and j.status = 'running';
end
$function$;

create or replace function memory.finish_conversation_summary(
    p_job_id bigint, p_worker text, p_summary text, p_usage jsonb default null::jsonb
)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_conversation memory.conversations;
    v_id uuid;
    v_profile uuid;
    v_week date;
begin
    select c.* into v_conversation from memory.conversations as c where c.id = (v_job.payload ->> 'conversation_id')::uuid;
    if found then
        -- Dated by its last turn, not by when the job ran: a late or retried job must not move
        -- the summary into another week.
        insert into memory.conversation_summaries as s (
            conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at
        )
        values (
            v_conversation.id, v_conversation.user_id, memory_private.long_term_profile(v_conversation.id),
            (v_job.payload ->> 'from_turn')::integer, (v_job.payload ->> 'to_turn')::integer, p_summary,
            coalesce((
                select max(m.created_at) from memory.messages as m
                where m.conversation_id = v_conversation.id and m.turn_number <= (v_job.payload ->> 'to_turn')::integer
                    and m.turn_number >= (v_job.payload ->> 'from_turn')::integer
            ), now())
        )
        on conflict (conversation_id, to_turn) do update set summary = excluded.summary, profile_id = excluded.profile_id
        returning s.id, s.profile_id, memory_private.local_week_start(
            s.created_at, (select p.timezone from memory.profiles as p where p.id = s.profile_id)
        ) into v_id, v_profile, v_week;
        if exists (
            select 1 from memory.weekly_summaries as w where w.profile_id = v_profile and w.week_start_date = v_week
        ) then
            perform memory_private.enqueue(
                'summarize_week', jsonb_build_object('profile_id', v_profile, 'week_start', v_week),
                format('week:%s:%s', v_profile, v_week), v_conversation.user_id, null, true
            );
        end if;
        perform memory_private.run_again('summarize_week', format('week:%s:%s', v_profile, v_week));
    end if;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('summary_id', v_id), p_usage);
    return v_id;
end
$function$;

create or replace function memory.finish_monthly_summary(
    p_job_id bigint,
    p_worker text,
    p_emotional_summary text,
    p_cognitive_summary text,
    p_key_themes text[],
    p_context jsonb default '{}'::jsonb,
    p_usage jsonb default null::jsonb
)
returns uuid
language plpgsql
set search_path to ''
as $function$
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
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('monthly_summary_id', v_id), p_usage);
    perform memory_private.ran_again(v_job);
    return v_id;
end
$function$;

create or replace function memory.finish_weekly_summary(
    p_job_id bigint,
    p_worker text,
    p_emotional_summary text,
    p_key_themes text[],
    p_dominant_patterns text[],
    p_usage jsonb default null::jsonb
)
returns uuid
language plpgsql
set search_path to ''
as $function$
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
$function$;


revoke all on function memory.finish_conversation_summary(bigint, text, text, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_conversation_summary(bigint, text, text, jsonb) to service_role;
revoke all on function memory.finish_monthly_summary(bigint, text, text, text, text[], jsonb, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_monthly_summary(bigint, text, text, text, text[], jsonb, jsonb) to service_role;
revoke all on function memory.finish_weekly_summary(bigint, text, text, text[], text[], jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_weekly_summary(bigint, text, text, text[], text[], jsonb) to service_role;
revoke all on function memory_private.ran_again(memory_private.jobs) from public, anon, authenticated, service_role;
grant execute on function memory_private.ran_again(memory_private.jobs) to service_role;
revoke all on function memory_private.run_again(text, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.run_again(text, text) to service_role;
