-- job_stats reads each figure from its own part of the queue (queued, running, dead, and what
-- finished or failed in the last hour), never the finished jobs kept for job_retention: it read
-- them all, 78 ms with 200,000 of them. Dead jobs and failures get partial indexes of their own.
create index jobs_dead_idx on memory_private.jobs using btree (kind) where (status = 'dead'::text);

create index jobs_failed_idx on memory_private.jobs using btree (failed_at) where (failed_at is not null);

create or replace view memory_private.job_stats with (security_invoker = true) as
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
