-- A week's input keeps its newest summary, cut to llm_text_chars, however long; month_end truncates a
-- timestamp, not a session-zone timestamptz; the minutely extraction pass counts no notes while extract is
-- left out of job_kinds; finish_conversation_summary names its row's columns through an alias.
set check_function_bodies = off;

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
    end if;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('summary_id', v_id), p_usage);
    return v_id;
end
$function$;

create or replace function memory.job_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_payload jsonb := v_job.payload;
    v_profile memory.profiles;
    v_message memory.messages;
    v_retry_at timestamptz;
    -- The longest text a prompt carries whole (memory_private.prompt_text).
    v_chars integer;
begin
    if v_job.kind = 'extract' then
        v_retry_at := memory_private.extraction_slot(v_job.user_id, v_job.id);
        if v_retry_at is not null then
            update memory_private.jobs as j
            set status = 'queued', attempts = j.attempts - 1, leased_until = null, worker = null, started_at = null,
                run_after = v_retry_at
            where j.id = p_job_id;
            return jsonb_build_object(
                'kind', v_job.kind,
                'deferred', jsonb_build_object(
                    'run_after', v_retry_at,
                    'reason', format(
                        'rate limit: %s extractions per user per minute', memory_private.setting('extraction_rate_limit')
                    )
                )
            );
        end if;
    end if;
    case v_job.kind
        when 'extract' then
            v_chars := memory_private.number_setting('llm_text_chars', 1);
            select m.* into v_message from memory.messages as m where m.id = (v_payload ->> 'source_message_id')::bigint;
            select p.* into v_profile from memory.profiles as p
            where p.id = memory_private.memory_profile(v_job.user_id, v_message.id, null);
            return jsonb_build_object(
                'kind', v_job.kind,
                'user_id', v_job.user_id,
                'source_message_id', v_message.id,
                'mode', (select c.mode from memory.conversations as c where c.id = v_message.conversation_id),
                'user_message', memory_private.prompt_text(v_message.content, v_chars),
                'assistant_message', (
                    select memory_private.prompt_text(a.content, v_chars) from memory.messages as a
                    where a.conversation_id = v_message.conversation_id and a.turn_number = v_message.turn_number
                        and a.role = 'assistant'
                ),
                -- Who the memories are about (seed 004: the profile's data, such as a birth chart, in
                -- its attributes), so a memory can say how it relates to them.
                'profile', memory_private.profile_document(v_profile),
                -- The nearest live memories, so the model can update or delete instead of adding.
                'existing_memories', coalesce((
                    select jsonb_agg(jsonb_build_object('id', n.id, 'content', n.content, 'type', n.type))
                    from (
                        select m.id, m.content, m.type
                        from memory.memories as m
                        where m.user_id = v_job.user_id
                            and m.profile_id = v_profile.id
                            and m.active and not m.archived and m.deleted_at is null
                        order by extensions.similarity(m.content, v_message.content) desc, m.id
                        limit 5
                    ) as n
                ), '[]')
            );
        when 'summarize_conversation', 'title' then
            v_chars := memory_private.number_setting('llm_text_chars', 1);
            return jsonb_build_object(
                'kind', v_job.kind,
                'conversation_id', v_payload ->> 'conversation_id',
                'turns', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'turn_number', t.turn_number,
                        'user', memory_private.prompt_text(t.user_content, v_chars),
                        'assistant', memory_private.prompt_text(t.assistant_content, v_chars)
                    ) order by t.turn_number)
                    from memory.turns as t
                    where t.conversation_id = (v_payload ->> 'conversation_id')::uuid
                        and t.turn_number between coalesce((v_payload ->> 'from_turn')::integer, 1)
                        and coalesce((v_payload ->> 'to_turn')::integer, 1)
                ), '[]')
            );
        when 'summarize_week' then
            v_chars := memory_private.number_setting('llm_text_chars', 1);
            select p.* into v_profile from memory.profiles as p where p.id = (v_payload ->> 'profile_id')::uuid;
            -- The week's summaries, newest first while they fit in llm_text_chars (a busy week holds
            -- a summary every few turns, past a small model's context), the newest always, cut to it:
            -- the prompt says how many of the week's first ones it leaves out.
            return (
                select jsonb_build_object(
                    'kind', v_job.kind,
                    'week_start', v_payload ->> 'week_start',
                    'time_zone', v_profile.timezone,
                    'summaries', coalesce(
                        jsonb_agg(memory_private.prompt_text(k.summary, v_chars) order by k.created_at, k.id)
                        filter (where k.spent <= v_chars or k.newest), '[]'
                    ),
                    'summaries_left_out', count(*) filter (where k.spent > v_chars and not k.newest)
                )
                from (
                    select s.id, s.summary, s.created_at,
                        sum(length(s.summary)) over (order by s.created_at desc, s.id desc) as spent,
                        row_number() over (order by s.created_at desc, s.id desc) = 1 as newest
                    from memory.conversation_summaries as s
                    -- The week's range in the profile's zone, so the profile's index reads only that week.
                    where s.profile_id = v_profile.id
                        and s.created_at >= ((v_payload ->> 'week_start')::date::timestamp at time zone v_profile.timezone)
                        and s.created_at < (((v_payload ->> 'week_start')::date + 7)::timestamp at time zone v_profile.timezone)
                        and memory_private.local_week_start(s.created_at, v_profile.timezone)
                        = (v_payload ->> 'week_start')::date
                ) as k
            );
        when 'summarize_month' then
            select p.* into v_profile from memory.profiles as p where p.id = (v_payload ->> 'profile_id')::uuid;
            return jsonb_build_object(
                'kind', v_job.kind,
                'month_start', v_payload ->> 'month_start',
                'profile', memory_private.profile_document(v_profile),
                'weekly_summaries', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'week_start', w.week_start_date, 'emotional_summary', w.emotional_summary,
                        'key_themes', w.key_themes, 'dominant_patterns', w.dominant_patterns
                    ) order by w.week_start_date)
                    from memory.weekly_summaries as w
                    -- The weeks whose Thursday is in the month: starting from 3 days before it to 4
                    -- before the next, a range of the profile's index.
                    where w.profile_id = (v_payload ->> 'profile_id')::uuid
                        and w.week_start_date between (v_payload ->> 'month_start')::date - 3
                        and ((v_payload ->> 'month_start')::date + interval '1 month')::date - 4
                ), '[]'),
                -- The month's weeks (their Thursday in it), each job found by its key, one probe a
                -- Monday: by status and payload this read every user's jobs. A week whose job died
                -- is pending too: the weekly scheduler queues it again an hour later, and the month
                -- summarised without it was never written again.
                'weeks_pending', (
                    select count(*)
                    from generate_series(
                        (v_payload ->> 'month_start')::date - 3,
                        ((v_payload ->> 'month_start')::date + interval '1 month')::date - 4,
                        interval '1 day'
                    ) as d
                    cross join lateral (
                        select 1 from memory_private.jobs as j
                        where j.kind = 'summarize_week'
                            and j.dedup_key = format('week:%s:%s', v_payload ->> 'profile_id', d::date)
                            and j.status in ('queued', 'running', 'dead')
                        limit 1
                    ) as j
                    where extract(isodow from d) = 1
                )
            );
        when 'compare_year' then
            return jsonb_build_object(
                'kind', v_job.kind,
                'year', v_payload -> 'year',
                'month', v_payload -> 'month',
                'months', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'year', m.year, 'emotional_summary', m.emotional_summary,
                        'cognitive_summary', m.cognitive_summary, 'key_themes', m.key_themes
                    ) order by m.year)
                    from memory.monthly_summaries as m
                    where m.profile_id = (v_payload ->> 'profile_id')::uuid and m.month = (v_payload ->> 'month')::integer
                        and m.year in ((v_payload ->> 'year')::integer - 1, (v_payload ->> 'year')::integer)
                ), '[]')
            );
        else
            raise exception using errcode = '22023', message = format('unknown job kind %L', v_job.kind);
    end case;
end
$function$;

create or replace function memory_private.month_end(p_month_start date)
returns date
language plpgsql
immutable
set search_path to ''
as $function$
begin
    -- As a timestamp: a date would be truncated as a timestamptz, in the session's time zone.
    return date_trunc('week', ((p_month_start + interval '1 month')::date - 4)::timestamp)::date + 7;
end
$function$;

create or replace procedure memory_private.run_extraction_queue()
language plpgsql
as $procedure$
declare
    v_batches integer;
begin
    if not memory_private.setting('job_kinds') ? 'extract' then
        return;
    end if;
    v_batches := ceil((select count(*) from memory_private.pending_extractions) / 1000.0)::integer;
    for i in 1..v_batches loop
        exit when memory_private.queue_pending_extractions(1000) = 0;
        commit;
    end loop;
end
$procedure$;


revoke all on function memory.finish_conversation_summary(bigint, text, text, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_conversation_summary(bigint, text, text, jsonb) to service_role;
revoke all on function memory.job_input(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory.job_input(bigint, text) to service_role;
revoke all on function memory_private.month_end(date) from public, anon, authenticated, service_role;
grant execute on function memory_private.month_end(date) to authenticated, service_role;
revoke all on procedure memory_private.run_extraction_queue() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_extraction_queue() to service_role;
