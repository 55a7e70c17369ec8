-- Why: observability (seed 004): queue depth, age of the oldest waiting job, failures and
-- latency by kind, and token usage. A view for dashboards and SQL alerts; memory.job_stats()
-- serves it to workers and the Data API (the private schema is not exposed).
--
-- A deferred job is queued work that is not due yet, like a retry backing off; `waiting`
-- says how many of the queued jobs those are, so a burst held back by the rate limit reads as
-- waiting work, not as stuck workers. Deferrals are not failures: retries_last_hour counts only
-- failed attempts. A turn's note for extraction (memory_private.pending_extractions) counts as a
-- queued extract job, which it becomes when a worker claims.
--
-- Each figure is read from its own part of the queue: the queued, running and dead jobs and what
-- finished or failed in the last hour, each through its index, never the finished jobs kept for
-- job_retention (78 ms with 200,000 of them when the view read them all). A kind shows while it
-- has queued, running or dead jobs, or finished or failed one in the last hour.
create view memory_private.job_stats with (security_invoker = true) as
select
    s.kind,
    coalesce(sum(s.queued), 0)::bigint as queued,
    coalesce(sum(s.running), 0)::bigint as running,
    coalesce(sum(s.dead), 0)::bigint as dead,
    coalesce(sum(s.done_last_hour), 0)::bigint as done_last_hour,
    now() - min(s.first_queued_at) as oldest_queued_age,
    coalesce(sum(s.retries_last_hour), 0)::bigint as retries_last_hour,
    max(s.p50_latency) as p50_latency,
    max(s.p95_latency) as p95_latency,
    coalesce(sum(s.tokens_last_hour), 0)::bigint as tokens_last_hour,
    coalesce(sum(s.waiting), 0)::bigint as waiting
from (
    select
        q.kind,
        count(*) as queued,
        null::bigint as running,
        null::bigint as dead,
        null::bigint as done_last_hour,
        min(q.created_at) as first_queued_at,
        null::bigint as retries_last_hour,
        null::interval as p50_latency,
        null::interval as p95_latency,
        null::bigint as tokens_last_hour,
        count(*) filter (where q.run_after > now()) as waiting
    from (
        select
            j.kind,
            j.run_after,
            j.created_at
        from memory_private.jobs as j
        where j.status = 'queued'
        union all
        select
            'extract' as kind,
            p.noted_at as run_after,
            p.noted_at as created_at
        from memory_private.pending_extractions as p
    ) as q
    group by q.kind
    union all
    select
        j.kind,
        null::bigint as queued,
        count(*) as running,
        null::bigint as dead,
        null::bigint as done_last_hour,
        null::timestamptz as first_queued_at,
        null::bigint as retries_last_hour,
        null::interval as p50_latency,
        null::interval as p95_latency,
        null::bigint as tokens_last_hour,
        null::bigint as waiting
    from memory_private.jobs as j
    where j.status = 'running'
    group by j.kind
    union all
    select
        j.kind,
        null::bigint as queued,
        null::bigint as running,
        count(*) as dead,
        null::bigint as done_last_hour,
        null::timestamptz as first_queued_at,
        null::bigint as retries_last_hour,
        null::interval as p50_latency,
        null::interval as p95_latency,
        null::bigint as tokens_last_hour,
        null::bigint as waiting
    from memory_private.jobs as j
    where j.status = 'dead'
    group by j.kind
    union all
    select
        j.kind,
        null::bigint as queued,
        null::bigint as running,
        null::bigint as dead,
        count(*) filter (where j.status = 'done') as done_last_hour,
        null::timestamptz as first_queued_at,
        null::bigint as retries_last_hour,
        percentile_cont(0.5) within group (order by j.finished_at - j.created_at) filter (
            where j.status = 'done'
        ) as p50_latency,
        percentile_cont(0.95) within group (order by j.finished_at - j.created_at) filter (
            where j.status = 'done'
        ) as p95_latency,
        sum((j.usage ->> 'total_tokens')::bigint) as tokens_last_hour,
        null::bigint as waiting
    from memory_private.jobs as j
    where j.status in ('done', 'dead') and j.finished_at > now() - interval '1 hour'
    group by j.kind
    union all
    select
        j.kind,
        null::bigint as queued,
        null::bigint as running,
        null::bigint as dead,
        null::bigint as done_last_hour,
        null::timestamptz as first_queued_at,
        count(*) as retries_last_hour,
        null::interval as p50_latency,
        null::interval as p95_latency,
        null::bigint as tokens_last_hour,
        null::bigint as waiting
    from memory_private.jobs as j
    where j.failed_at > now() - interval '1 hour'
    group by j.kind
) as s
group by s.kind;

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
