-- A chat's prompt carries the beginning of each long turn of its window, as a job's does: a pasted
-- document went whole into every answer's prompt while it stayed in the window, and past the
-- model's context each of them was refused. memory_private.prompt_text takes the limit from its
-- caller, who reads llm_text_chars once, and is inlined (SQL with no SET clause).

drop function if exists memory_private.prompt_text(p_text text);

set check_function_bodies = off;

create or replace function memory_private.prompt_text(p_text text, p_max integer)
returns text
language sql
immutable
return case when (length(p_text) <= p_max) then p_text else ((("left"(p_text, p_max) || '
[… '::text) || ((length(p_text) - p_max))::text) || ' more characters not shown]'::text) end;

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
            select p.* into v_profile from memory.profiles as p where p.id = (v_payload ->> 'profile_id')::uuid;
            return jsonb_build_object(
                'kind', v_job.kind,
                'week_start', v_payload ->> 'week_start',
                'time_zone', v_profile.timezone,
                'summaries', coalesce((
                    select jsonb_agg(s.summary order by s.created_at)
                    from memory.conversation_summaries as s
                    -- The week's range in the profile's zone, so the profile's index reads only that week.
                    where s.profile_id = v_profile.id
                        and s.created_at >= ((v_payload ->> 'week_start')::date::timestamp at time zone v_profile.timezone)
                        and s.created_at < (((v_payload ->> 'week_start')::date + 7)::timestamp at time zone v_profile.timezone)
                        and memory_private.local_week_start(s.created_at, v_profile.timezone)
                        = (v_payload ->> 'week_start')::date
                ), '[]')
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
                -- Monday: by status and payload this read every user's jobs.
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
                            and j.status in ('queued', 'running')
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

create or replace function memory.prompt_context(
    p_conversation_id uuid,
    p_query text default null::text,
    p_max_turns integer default 10,
    p_memory_limit integer default null::integer,
    p_token_budget integer default null::integer,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns json
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_conversation memory.conversations;
    v_memories json := '[]';
    v_profiled boolean := false;
    v_history json;
    v_position integer := memory_private.reference_position(p_query);
    v_caller uuid := (select auth.uid());
    -- Whose memory the prompt holds: the owner's, or a participant's own.
    v_user uuid;
    v_profile uuid;
    v_chars integer;
begin
    select c.* into v_conversation from memory.conversations as c where c.id = p_conversation_id;
    if found then
        v_user := v_conversation.user_id;
        v_profile := v_conversation.profile_id;
        -- Another reader who is no participant (a tenant admin) gets the owner's, as the policies let them.
        if v_caller <> v_conversation.user_id and exists (
            select 1 from memory.participants as p where p.conversation_id = p_conversation_id and p.user_id = v_caller
        ) then
            v_user := v_caller;
            v_profile := memory_private.chosen_profile(p_conversation_id);
        end if;
        v_profiled := v_conversation.remember and exists (
            select 1 from memory.profiles as p where p.id = v_profile and p.user_id = v_user and p.is_primary
        );
    end if;
    if v_profiled then
        select coalesce(json_agg(s), '[]') into v_memories
        from memory.select_memories(
            v_user, v_profile, p_query, p_memory_limit, p_token_budget, p_query_embedding => p_query_embedding
        ) as s;
    end if;
    -- A long text of the window reaches the prompt as its beginning (memory_private.prompt_text).
    v_chars := memory_private.number_setting('llm_text_chars', 1);
    v_history := coalesce(
        (select json_agg(h order by h.turn_number)
        from (
            select t.conversation_id, t.user_id, t.tenant_id, t.turn_number, t.user_message_id,
                t.assistant_message_id, memory_private.prompt_text(t.user_content, v_chars) as user_content,
                memory_private.prompt_text(t.assistant_content, v_chars) as assistant_content, t.metadata, t.created_at
            from memory_private.turn_history(p_conversation_id, p_max_turns) as t
        ) as h),
        '[]'
    );
    return json_build_object(
        'conversation_id', p_conversation_id,
        'history', v_history,
        -- The referenced turn comes from the window just built (resolve_reference's rule).
        'referenced_turn', v_history -> (case when v_position > 0 then v_position - 1 else v_position end),
        'memories', v_memories,
        'conversation_summary', (
            select to_json(s) from memory.conversation_summaries as s
            where s.conversation_id = p_conversation_id
            order by s.to_turn desc limit 1
        ),
        'weekly_summary', case when v_profiled then (
            select to_json(w) from memory.weekly_summaries as w
            where w.profile_id = v_profile
            order by w.week_start_date desc limit 1
        ) end,
        'monthly_summary', case when v_profiled then (
            select to_json(m) from memory.monthly_summaries as m
            where m.profile_id = v_profile
            order by m.year desc, m.month desc limit 1
        ) end
    );
end
$function$;


revoke all on function memory.job_input(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory.job_input(bigint, text) to service_role;
revoke all on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.prompt_text(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.prompt_text(text, integer) to authenticated, service_role;

update memory_private.settings
set
    description
    = 'Characters of a message a prompt (a job''s, a chat''s window) carries at most: its beginning, '
    || 'about 5,000 tokens.'
where key = 'llm_text_chars';
