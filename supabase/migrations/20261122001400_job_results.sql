-- What a job reads (job_input) and how its result is written (finish_*): each finish RPC checks
-- the lease, validates the output, writes it and completes the job in one transaction, so a
-- result is written exactly once however often a job is delivered.

-- Why: one call gives a worker everything its prompt needs, read under the job's lease.
create function memory.job_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_payload jsonb := v_job.payload;
    v_profile memory.profiles;
    v_message memory.messages;
begin
    case v_job.kind
        when 'extract' then
            select m.* into v_message from memory.messages as m where m.id = (v_payload ->> 'source_message_id')::bigint;
            return jsonb_build_object(
                'kind', v_job.kind,
                'user_id', v_job.user_id,
                'source_message_id', v_message.id,
                'mode', (select c.mode from memory.conversations as c where c.id = v_message.conversation_id),
                'user_message', v_message.content,
                'assistant_message', (
                    select a.content from memory.messages as a
                    where a.conversation_id = v_message.conversation_id and a.turn_number = v_message.turn_number
                        and a.role = 'assistant'
                ),
                -- The nearest live memories, so the model can update or delete instead of adding.
                'existing_memories', coalesce((
                    select jsonb_agg(jsonb_build_object('id', n.id, 'content', n.content, 'type', n.type))
                    from (
                        select m.id, m.content, m.type
                        from memory.memories as m
                        where m.user_id = v_job.user_id
                            and m.profile_id = memory_private.memory_profile(v_job.user_id, v_message.id, null)
                            and m.active and not m.archived and m.deleted_at is null
                        order by extensions.similarity(m.content, v_message.content) desc, m.id
                        limit 5
                    ) as n
                ), '[]')
            );
        when 'summarize_conversation', 'title' then
            return jsonb_build_object(
                'kind', v_job.kind,
                'conversation_id', v_payload ->> 'conversation_id',
                'turns', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'turn_number', t.turn_number, 'user', t.user_content, 'assistant', t.assistant_content
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
                    where s.profile_id = v_profile.id
                        and memory_private.local_week_start(s.created_at, v_profile.timezone)
                        = (v_payload ->> 'week_start')::date
                ), '[]')
            );
        when 'summarize_month' then
            return jsonb_build_object(
                'kind', v_job.kind,
                'month_start', v_payload ->> 'month_start',
                'weekly_summaries', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'week_start', w.week_start_date, 'emotional_summary', w.emotional_summary,
                        'key_themes', w.key_themes, 'dominant_patterns', w.dominant_patterns
                    ) order by w.week_start_date)
                    from memory.weekly_summaries as w
                    where w.profile_id = (v_payload ->> 'profile_id')::uuid
                        and date_trunc('month', w.week_start_date + 3)::date = (v_payload ->> 'month_start')::date
                ), '[]'),
                'weeks_pending', (
                    select count(*) from memory_private.jobs as j
                    where j.kind = 'summarize_week' and j.status in ('queued', 'running')
                        and j.payload ->> 'profile_id' = v_payload ->> 'profile_id'
                        and date_trunc('month', (j.payload ->> 'week_start')::date + 3)::date
                        = (v_payload ->> 'month_start')::date
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
$$;
grant execute on function memory.job_input(bigint, text) to service_role;

-- Why: the extraction's operations are applied by apply_extraction (gate, dedup, history,
-- idempotency) and the job completes in the same transaction.
create function memory.finish_extraction(p_job_id bigint, p_worker text, p_operations jsonb, p_usage jsonb default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_result jsonb;
begin
    if v_job.kind <> 'extract' then
        raise exception using errcode = '22023', message = format('job %s is a %s job', p_job_id, v_job.kind);
    end if;
    select coalesce(jsonb_agg(jsonb_build_object('memory_id', r.memory_id, 'outcome', r.outcome)), '[]')
    into v_result
    from memory.apply_extraction((v_job.payload ->> 'source_message_id')::bigint, p_operations, v_job.user_id) as r;
    perform memory.complete_job(p_job_id, p_worker, v_result, p_usage);
    return v_result;
end
$$;
grant execute on function memory.finish_extraction(bigint, text, jsonb, jsonb) to service_role;

-- Why: seed 004's 4-turn summary; regenerating replaces it.
create function memory.finish_conversation_summary(
    p_job_id bigint, p_worker text, p_summary text, p_usage jsonb default null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_conversation memory.conversations;
    v_id uuid;
begin
    select c.* into v_conversation from memory.conversations as c where c.id = (v_job.payload ->> 'conversation_id')::uuid;
    if found then
        -- Dated by its last turn, not by when the job ran: a late or retried job must not move
        -- the summary into another week.
        insert into memory.conversation_summaries (
            conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at
        )
        values (
            v_conversation.id, v_conversation.user_id, v_conversation.profile_id,
            (v_job.payload ->> 'from_turn')::integer, (v_job.payload ->> 'to_turn')::integer, p_summary,
            coalesce((
                select max(m.created_at) from memory.messages as m
                where m.conversation_id = v_conversation.id and m.turn_number <= (v_job.payload ->> 'to_turn')::integer
                    and m.turn_number >= (v_job.payload ->> 'from_turn')::integer
            ), now())
        )
        on conflict (conversation_id, to_turn) do update set summary = excluded.summary
        returning id into v_id;
    end if;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('summary_id', v_id), p_usage);
    return v_id;
end
$$;
grant execute on function memory.finish_conversation_summary(bigint, text, text, jsonb) to service_role;

-- Why: seed 002's open question: a title from the first turn, never over one the user set.
create function memory.finish_title(p_job_id bigint, p_worker text, p_title text, p_usage jsonb default null)
returns text
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_title text := left(btrim(p_title), 120);
begin
    if v_title is null or v_title !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'title must not be empty';
    end if;
    update memory.conversations as c set title = v_title
    where c.id = (v_job.payload ->> 'conversation_id')::uuid and c.title is null;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('title', v_title), p_usage);
    return v_title;
end
$$;
grant execute on function memory.finish_title(bigint, text, text, jsonb) to service_role;

-- Why: the weekly summary; counts come from the data, not from the model.
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
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('weekly_summary_id', v_id), p_usage);
    return v_id;
end
$$;
grant execute on function memory.finish_weekly_summary(bigint, text, text, text[], text[], jsonb) to service_role;

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
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('monthly_summary_id', v_id), p_usage);
    return v_id;
end
$$;
grant execute on function memory.finish_monthly_summary(bigint, text, text, text, text[], jsonb, jsonb)
to service_role;

create function memory.finish_year_comparison(
    p_job_id bigint, p_worker text, p_comparison text, p_usage jsonb default null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_profile memory.profiles;
    v_id uuid;
begin
    select p.* into v_profile from memory.profiles as p where p.id = (v_job.payload ->> 'profile_id')::uuid;
    insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
    values (
        v_profile.user_id, v_profile.id, (v_job.payload ->> 'year')::integer, (v_job.payload ->> 'month')::integer,
        p_comparison
    )
    on conflict (user_id, profile_id, year, month) do update set comparison = excluded.comparison, created_at = now()
    returning id into v_id;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('yearly_comparison_id', v_id), p_usage);
    return v_id;
end
$$;
grant execute on function memory.finish_year_comparison(bigint, text, text, jsonb) to service_role;

-- The one round trip for a prompt now carries the memories and summaries too: memories only for a
-- conversation whose selected profile is its owner's primary one and whose "remember" toggle is
-- on (seed 004: the handlers check the profile before injecting memories), the latest
-- conversation summary, and the profile's newest weekly and monthly summaries. It only reads: the
-- memories it returns are counted as used when the answer is stored with their ids.
drop function memory.prompt_context(uuid, text, integer);
create function memory.prompt_context(
    p_conversation_id uuid,
    p_query text default null,
    p_max_turns integer default 10,
    p_memory_limit integer default null,
    p_token_budget integer default null
)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_conversation memory.conversations;
    v_memories jsonb := '[]';
    v_profiled boolean := false;
    v_history jsonb;
    v_position integer := memory_private.reference_position(p_query);
begin
    select c.* into v_conversation from memory.conversations as c where c.id = p_conversation_id;
    v_profiled := found and v_conversation.remember and exists (
        select 1 from memory.profiles as p
        where p.id = v_conversation.profile_id and p.user_id = v_conversation.user_id and p.is_primary
    );
    if v_profiled then
        select coalesce(jsonb_agg(to_jsonb(s)), '[]') into v_memories
        from memory.select_memories(
            v_conversation.user_id, v_conversation.profile_id, p_query, p_memory_limit, p_token_budget
        ) as s;
    end if;
    v_history := coalesce(
        (select jsonb_agg(to_jsonb(h) order by h.turn_number)
        from memory.turn_history(p_conversation_id, p_max_turns) as h),
        '[]'
    );
    return jsonb_build_object(
        'conversation_id', p_conversation_id,
        'history', v_history,
        -- The referenced turn comes from the window just built (resolve_reference's rule).
        'referenced_turn', v_history -> (case when v_position > 0 then v_position - 1 else v_position end),
        'memories', v_memories,
        'conversation_summary', (
            select to_jsonb(s) from memory.conversation_summaries as s
            where s.conversation_id = p_conversation_id
            order by s.to_turn desc limit 1
        ),
        'weekly_summary', case when v_profiled then (
            select to_jsonb(w) from memory.weekly_summaries as w
            where w.profile_id = v_conversation.profile_id
            order by w.week_start_date desc limit 1
        ) end,
        'monthly_summary', case when v_profiled then (
            select to_jsonb(m) from memory.monthly_summaries as m
            where m.profile_id = v_conversation.profile_id
            order by m.year desc, m.month desc limit 1
        ) end
    );
end
$$;
grant execute on function memory.prompt_context(uuid, text, integer, integer, integer) to authenticated, service_role;

insert into memory_private.schedules (name, schedule, command) values
('supamem-reap-leases', '* * * * *', 'select memory_private.reap_expired_leases()'),
('supamem-prune-jobs', '53 * * * *', 'select memory_private.prune_finished_jobs()'),
-- Hourly, so each time zone's week and month are picked up soon after they end locally.
('supamem-weekly-summaries', '7 * * * *', 'select memory_private.enqueue_due_weekly_summaries()'),
('supamem-monthly-summaries', '37 * * * *', 'select memory_private.enqueue_due_monthly_summaries()');

select memory_private.schedule_jobs();

revoke execute on all routines in schema memory, memory_private from public;
