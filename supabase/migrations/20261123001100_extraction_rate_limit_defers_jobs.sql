-- An extraction job past its user's rate limit waits instead of failing.
--
-- Why: the limit (extraction_rate_limit per user per minute, 54000 from apply_extraction) was
-- met only in finish_extraction, after the worker had paid for the model's answer; the worker
-- then failed the job, which spent an attempt, so a burst of one user's extractions lasting a
-- few minutes dead-lettered jobs and their memories were never extracted. Now memory.job_input,
-- the call every worker makes before asking the model, admits the job or defers it: a deferred
-- job goes back to the queue with its attempt given back and a run_after when the user's window
-- has room for it, and the worker is told so ({"deferred": {...}}) and asks no model.
-- claim_jobs stays as it was: the hot path pays nothing for the rule.

-- The admission counts a user's running and waiting extractions; this keeps that a probe of a
-- small index (pending extractions only), however many finished jobs the user has.
create index jobs_pending_extractions_idx on memory_private.jobs (user_id, status, run_after)
where kind = 'extract' and status in ('queued', 'running');

-- Why: one rule, in one place, for whether a claimed extraction may ask the model now. A slot of
-- the user's window is taken by each extraction applied in the last minute (the ledger, as
-- apply_extraction counts) and by each extraction job running now (it will write a ledger row
-- when it finishes), so jobs admitted together never exceed the limit at finish. Decisions for
-- one user are taken one at a time (an advisory lock), so two workers never both take the
-- user's last slot. Jobs claimed together and not decided yet count as running too, which can
-- only make a wait longer, never the window fuller. Returns null when the job may run now, else
-- when to try it again: when the ledger row that frees its slot leaves the window, behind the
-- user's extractions already waiting; past the ledger rows, slots free at most
-- extraction_rate_limit a minute.
create function memory_private.extraction_slot(p_user_id uuid, p_job_id bigint)
returns timestamptz
language plpgsql
set search_path = ''
as $$
declare
    v_limit integer := (memory_private.setting('extraction_rate_limit'))::integer;
    v_recent integer;
    v_running integer;
    v_waiting integer;
    v_line integer;
begin
    if p_user_id is null then
        return null;
    end if;
    perform pg_advisory_xact_lock(hashtextextended('supamem.extraction_slot:' || p_user_id::text, 0));
    -- Each statement below sees what the previous holder of the lock committed.
    select count(*) into v_recent from memory.memory_extractions as e
    where e.user_id = p_user_id and e.created_at > now() - interval '1 minute';
    select count(*) into v_running from memory_private.jobs as j
    where j.user_id = p_user_id and j.kind = 'extract' and j.status = 'running' and j.id <> p_job_id;
    if v_recent + v_running < v_limit then
        return null;
    end if;
    select count(*) into v_waiting from memory_private.jobs as j
    where j.user_id = p_user_id and j.kind = 'extract' and j.status = 'queued' and j.run_after > now();
    -- How many slots must free before this job fits, queued behind the ones already waiting.
    v_line := v_recent + v_running + v_waiting + 1 - v_limit;
    if v_line <= v_recent then
        return (
            select e.created_at + interval '1 minute' from memory.memory_extractions as e
            where e.user_id = p_user_id and e.created_at > now() - interval '1 minute'
            order by e.created_at
            offset v_line - 1 limit 1
        );
    end if;
    return now() + interval '1 minute' * ceil((v_line - v_recent)::numeric / greatest(v_limit, 1));
end
$$;
grant execute on function memory_private.extraction_slot(uuid, bigint) to service_role;

-- Why: one call gives a worker everything its prompt needs, read under the job's lease; for an
-- extraction past its user's rate limit it answers {"kind", "deferred": {"run_after", "reason"}}
-- instead, having put the job back in the queue without spending its attempt.
-- Otherwise as in 20261122001400_job_results.sql.
create or replace function memory.job_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_payload jsonb := v_job.payload;
    v_profile memory.profiles;
    v_message memory.messages;
    v_retry_at timestamptz;
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

-- Why: a deferred job is queued work that is not due yet, like a retry backing off; `waiting`
-- says how many of the queued jobs those are, so a burst held back by the rate limit reads as
-- waiting work, not as stuck workers. Deferrals are not failures: retries_last_hour counts only
-- failed attempts. Otherwise as in 20261122001200_job_queue.sql.
create or replace view memory_private.job_stats with (security_invoker = true) as
select
    j.kind,
    count(*) filter (where j.status = 'queued') as queued,
    count(*) filter (where j.status = 'running') as running,
    count(*) filter (where j.status = 'dead') as dead,
    count(*) filter (where j.status = 'done' and j.finished_at > now() - interval '1 hour') as done_last_hour,
    now() - min(j.created_at) filter (where j.status = 'queued') as oldest_queued_age,
    count(*) filter (where j.failed_at > now() - interval '1 hour') as retries_last_hour,
    percentile_cont(0.5) within group (order by j.finished_at - j.created_at)
    filter (where j.status = 'done' and j.finished_at > now() - interval '1 hour') as p50_latency,
    percentile_cont(0.95) within group (order by j.finished_at - j.created_at)
    filter (where j.status = 'done' and j.finished_at > now() - interval '1 hour') as p95_latency,
    coalesce(
        sum((j.usage ->> 'total_tokens')::bigint) filter (where j.finished_at > now() - interval '1 hour'), 0
    )::bigint as tokens_last_hour,
    count(*) filter (where j.status = 'queued' and j.run_after > now()) as waiting
from memory_private.jobs as j
group by j.kind;

revoke execute on all routines in schema memory, memory_private from public;
