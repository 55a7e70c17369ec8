-- job_stats is its first shape again, reading only the jobs its figures count through one
-- BitmapOr over the partial indexes: the same figures and bounds as the union of five parts
-- (20261127072816) in a statement a fifth the size.
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
        'extract' as kind,
        'queued' as status,
        p.noted_at as run_after,
        p.noted_at as created_at,
        null::timestamptz as finished_at,
        null::timestamptz as failed_at,
        null::jsonb as usage
    from memory_private.pending_extractions as p
) as j
group by j.kind;
