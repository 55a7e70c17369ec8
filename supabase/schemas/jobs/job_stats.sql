-- Why: observability (seed 004): queue depth, age of the oldest waiting job, failures and
-- latency by kind, and token usage. A view for dashboards and SQL alerts; memory.job_stats()
-- serves it to workers and the Data API (the private schema is not exposed).
--
-- A deferred job is queued work that is not due yet, like a retry backing off; `waiting`
-- says how many of the queued jobs those are, so a burst held back by the rate limit reads as
-- waiting work, not as stuck workers. Deferrals are not failures: retries_last_hour counts only
-- failed attempts. A turn's note for extraction or a summary (memory_private.pending_extractions,
-- pending_summaries) counts as a queued job of its kind, which it becomes when a worker claims.
--
-- Only the jobs a figure counts are read: the queued, running and dead ones and what finished or
-- failed in the last hour (reading every job kept for job_retention took 78 ms with 200,000 of
-- them). A kind shows while it has such jobs.
create view memory_private.job_stats with (security_invoker = true) as
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
from (
    select
        q.kind,
        q.status,
        q.run_after,
        q.created_at,
        q.finished_at,
        q.failed_at,
        q.usage
    from memory_private.jobs as q
    -- Each arm is read through its partial index (a BitmapOr).
    where
        q.status = 'queued' or q.status = 'running' or q.status = 'dead'
        or (q.status in ('done', 'dead') and q.finished_at > now() - interval '1 hour')
        or q.failed_at > now() - interval '1 hour'
    union all
    select
        n.kind,
        'queued' as status,
        n.noted_at as run_after,
        n.noted_at as created_at,
        null::timestamptz as finished_at,
        null::timestamptz as failed_at,
        null::jsonb as usage
    from (
        select
            'extract' as kind,
            e.noted_at
        from memory_private.pending_extractions as e
        union all
        select
            'summarize_conversation' as kind,
            s.noted_at
        from memory_private.pending_summaries as s
    ) as n
) as j
group by j.kind;

grant select on memory_private.job_stats to service_role;

create function memory.job_stats()
returns setof memory_private.job_stats
language plpgsql
stable
set search_path = ''
as $$
begin
    return query
    select * from memory_private.job_stats order by kind;
end
$$;

revoke all on function memory.job_stats() from public, anon, authenticated, service_role;
grant execute on function memory.job_stats() to service_role;
