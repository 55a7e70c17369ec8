-- One minutely pass for the turns' notes of either kind (memory_private.run_note_queue) instead of a
-- procedure per kind; job_stats reads both kinds of note in one arm.
drop procedure if exists memory_private.run_extraction_queue();

drop procedure if exists memory_private.run_summary_queue();

set check_function_bodies = off;

create or replace procedure memory_private.run_note_queue(in p_kind text)
language plpgsql
as $procedure$
declare
    v_batches integer;
begin
    if p_kind is null or p_kind not in ('extract', 'summarize_conversation') then
        raise exception using errcode = '22023', message = format('no notes of kind %L', p_kind),
            hint = 'The turns note extract and summarize_conversation work.';
    end if;
    if not memory_private.setting('job_kinds') ? p_kind then
        return;
    end if;
    v_batches := ceil((
        case p_kind
            when 'extract' then (select count(*) from memory_private.pending_extractions)
            else (select count(*) from memory_private.pending_summaries)
        end
    ) / 1000.0)::integer;
    for i in 1..v_batches loop
        exit when (
            case p_kind
                when 'extract' then memory_private.queue_pending_extractions(1000)
                else memory_private.queue_pending_summaries(1000)
            end
        ) = 0;
        commit;
    end loop;
end
$procedure$;

create or replace view memory_private.job_stats with (security_invoker = true) as select
    j.kind,
    count(*) filter (where (j.status = 'queued'::text)) as queued,
    count(*) filter (where (j.status = 'running'::text)) as running,
    count(*) filter (where (j.status = 'dead'::text)) as dead,
    count(*) filter (where ((j.status = 'done'::text) and (j.finished_at > (now() - '01:00:00'::interval))))
        as done_last_hour,
    (now() - min(j.created_at) filter (where (j.status = 'queued'::text))) as oldest_queued_age,
    count(*) filter (where (j.failed_at > (now() - '01:00:00'::interval))) as retries_last_hour,
    percentile_cont((0.5)::double precision) within group (order by (j.finished_at - j.created_at)) filter (
        where ((j.status = 'done'::text) and (j.finished_at > (now() - '01:00:00'::interval)))
    ) as p50_latency,
    percentile_cont((0.95)::double precision) within group (order by (j.finished_at - j.created_at)) filter (
        where ((j.status = 'done'::text) and (j.finished_at > (now() - '01:00:00'::interval)))
    ) as p95_latency,
    (
        coalesce(
            sum(((j.usage ->> 'total_tokens'::text))::bigint) filter (
                where (j.finished_at > (now() - '01:00:00'::interval))
            ),
            (0)::numeric
        )
    )::bigint as tokens_last_hour,
    count(*) filter (where ((j.status = 'queued'::text) and (j.run_after > now()))) as waiting
from (select
    q.kind,
    q.status,
    q.run_after,
    q.created_at,
    q.finished_at,
    q.failed_at,
    q.usage
from memory_private.jobs as q
where
    (
        (q.status = 'queued'::text)
        or (q.status = 'running'::text)
        or (q.status = 'dead'::text)
        or ((q.status = any(array['done'::text, 'dead'::text])) and (q.finished_at > (now() - '01:00:00'::interval)))
        or (q.failed_at > (now() - '01:00:00'::interval))
    )
union all
select
    n.kind,
    'queued'::text as status,
    n.noted_at as run_after,
    n.noted_at as created_at,
    null::timestamp with time zone as finished_at,
    null::timestamp with time zone as failed_at,
    null::jsonb as usage
from (select
    'extract'::text as kind,
    e.noted_at
from memory_private.pending_extractions as e
union all
select
    'summarize_conversation'::text as kind,
    s.noted_at
from memory_private.pending_summaries as s) as n) as j
group by j.kind;

revoke all on procedure memory_private.run_note_queue(text) from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_note_queue(text) to service_role;

update memory_private.schedules set command = $job$call memory_private.run_note_queue('extract')$job$
where name = 'supamem-queue-extractions';
update memory_private.schedules set command = $job$call memory_private.run_note_queue('summarize_conversation')$job$
where name = 'supamem-queue-summaries';
select memory_private.schedule_jobs();
