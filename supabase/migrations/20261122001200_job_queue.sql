-- The work queue the Python jobs claim from (private: clients never see it).
--
-- At-least-once delivery with idempotent writes: a job is claimed with `for update skip locked`
-- and a lease; a worker that dies loses its lease and the reaper hands the job to another; every
-- result is written by an RPC that first checks the lease, in the same transaction, so a job's
-- result is written exactly once.

insert into memory_private.settings (key, value, description) values
('job_max_attempts', '5', 'Attempts before a job is dead-lettered.'),
('job_backoff_base', '"10 seconds"', 'First retry delay; each further attempt doubles it.'),
('job_backoff_max', '"1 hour"', 'Longest retry delay.'),
('job_lease', '"5 minutes"', 'Default lease of a claimed job.'),
('job_retention', '"14 days"', 'Finished jobs are kept this long for the stats view.'),
(
    'job_kinds', '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year"]',
    'Kinds of job the database queues; an app that runs no workers sets [] and nothing piles up.'
);

create table memory_private.jobs (
    id bigint generated always as identity primary key,
    kind text not null check (kind ~ '^[a-z_]+$'),
    payload jsonb not null default '{}' check (jsonb_typeof(payload) = 'object'),
    dedup_key text,
    user_id uuid references memory.users (id) on delete cascade,
    status text not null default 'queued' check (status in ('queued', 'running', 'done', 'dead')),
    attempts integer not null default 0 check (attempts >= 0),
    max_attempts integer not null check (max_attempts > 0),
    run_after timestamptz not null default now(),
    leased_until timestamptz,
    worker text,
    last_error text,
    failed_at timestamptz,
    result jsonb,
    usage jsonb,
    created_at timestamptz not null default now(),
    started_at timestamptz,
    finished_at timestamptz,
    constraint jobs_running_is_leased check ((status = 'running') = (leased_until is not null))
);
-- One job per kind and dedup key, whatever its state: a retried trigger or cron run adds nothing.
create unique index jobs_kind_dedup_key on memory_private.jobs (kind, dedup_key) where dedup_key is not null;
create index jobs_claimable_idx on memory_private.jobs (kind, run_after, id) where status = 'queued';
create index jobs_leased_idx on memory_private.jobs (leased_until) where status = 'running';
create index jobs_finished_idx on memory_private.jobs (finished_at) where status in ('done', 'dead');
create index jobs_user_id_idx on memory_private.jobs (user_id);
alter table memory_private.jobs enable row level security;
grant select, insert, update, delete on memory_private.jobs to service_role;
comment on table memory_private.jobs is 'Work for the Python jobs: extraction, summaries, titles.';

-- Why: one way in for every producer (triggers, pg_cron, on-demand RPCs). With p_replace a
-- finished or dead job of the same key is queued again (regenerating a month); a queued or
-- running one is left alone. Kinds missing from the job_kinds setting are not queued at all.
create function memory_private.enqueue(
    p_kind text,
    p_payload jsonb,
    p_dedup_key text default null,
    p_user_id uuid default null,
    p_run_after timestamptz default null,
    p_replace boolean default false
)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_id bigint;
begin
    if not memory_private.setting('job_kinds') ? p_kind then
        return null;
    end if;
    insert into memory_private.jobs (kind, payload, dedup_key, user_id, run_after, max_attempts)
    values (
        p_kind, coalesce(p_payload, '{}'), p_dedup_key, p_user_id, coalesce(p_run_after, now()),
        (memory_private.setting('job_max_attempts'))::integer
    )
    on conflict (kind, dedup_key) where dedup_key is not null do nothing
    returning id into v_id;
    if v_id is null and p_replace then
        update memory_private.jobs as j
        set status = 'queued', payload = coalesce(p_payload, '{}'), attempts = 0, run_after = coalesce(p_run_after, now()),
            last_error = null, failed_at = null, result = null, usage = null, worker = null, started_at = null,
            finished_at = null, created_at = now()
        where j.kind = p_kind and j.dedup_key = p_dedup_key and j.status in ('done', 'dead')
        returning j.id into v_id;
    end if;
    return v_id;
end
$$;
grant execute on function memory_private.enqueue(text, jsonb, text, uuid, timestamptz, boolean) to service_role;

-- Why: workers take a batch of the kinds they handle; `skip locked` lets many workers claim
-- concurrently without waiting on or double-taking a job. p_user_ids keeps a worker to some users'
-- work (a tenant's dedicated worker, a demo that must not touch anyone else's jobs).
create function memory.claim_jobs(
    p_kinds text[], p_worker text, p_limit integer default 1, p_lease interval default null,
    p_user_ids uuid[] default null
)
returns table (id bigint, kind text, payload jsonb, user_id uuid, attempts integer, leased_until timestamptz)
language plpgsql
set search_path = ''
as $$
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or p_lease <= interval '0' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a positive lease are required';
    end if;
    return query
    with claimable as (
        select j.id from memory_private.jobs as j
        where j.status = 'queued' and j.run_after <= now() and j.kind = any(p_kinds)
            and (p_user_ids is null or j.user_id = any(p_user_ids))
        order by j.run_after, j.id
        limit p_limit
        for update skip locked
    )
    update memory_private.jobs as j
    set status = 'running', attempts = j.attempts + 1, worker = p_worker, started_at = now(),
        leased_until = now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval)
    from claimable
    where j.id = claimable.id
    returning j.id, j.kind, j.payload, j.user_id, j.attempts, j.leased_until;
end
$$;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;

-- Why: every write of a job's outcome goes through here first: the job must still be running
-- under this worker's lease, else the worker lost it (a slow worker whose job was reclaimed) and
-- must write nothing.
create function memory_private.hold_lease(p_job_id bigint, p_worker text)
returns memory_private.jobs
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs;
begin
    select j.* into v_job from memory_private.jobs as j where j.id = p_job_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = format('job %s not found', p_job_id);
    end if;
    if v_job.status <> 'running' or v_job.worker is distinct from p_worker or v_job.leased_until < now() then
        raise exception using errcode = '55000', message = format('job %s is not leased to %s', p_job_id, p_worker),
            detail = format('status %s, worker %s, lease until %s', v_job.status, v_job.worker, v_job.leased_until);
    end if;
    return v_job;
end
$$;
grant execute on function memory_private.hold_lease(bigint, text) to service_role;

create function memory.extend_lease(p_job_id bigint, p_worker text, p_lease interval default null)
returns timestamptz
language plpgsql
set search_path = ''
as $$
declare
    v_until timestamptz := now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval);
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j set leased_until = v_until where j.id = p_job_id;
    return v_until;
end
$$;
grant execute on function memory.extend_lease(bigint, text, interval) to service_role;

-- Why: the generic completion; result RPCs call it after writing their output in the same
-- transaction. Usage is the LLM's token accounting (seed 004's prompt usage metrics).
create function memory.complete_job(
    p_job_id bigint, p_worker text, p_result jsonb default null, p_usage jsonb default null
)
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j
    set status = 'done', result = p_result, usage = p_usage, finished_at = now(), leased_until = null
    where j.id = p_job_id;
end
$$;
grant execute on function memory.complete_job(bigint, text, jsonb, jsonb) to service_role;

-- Why: a failed attempt is retried with exponential backoff (or after the provider's
-- Retry-After), and dead-lettered after max_attempts so a poison job cannot loop forever.
create function memory.fail_job(
    p_job_id bigint, p_worker text, p_error text, p_retry_after interval default null
)
returns text
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    -- Capped in seconds before doubling can overflow an interval (many attempts).
    v_delay interval := coalesce(p_retry_after, make_interval(secs => least(
        extract(epoch from (memory_private.setting('job_backoff_max') #>> '{}')::interval),
        extract(epoch from (memory_private.setting('job_backoff_base') #>> '{}')::interval)
        * power(2::numeric, greatest(v_job.attempts - 1, 0))
    )::double precision));
    v_status text := case when v_job.attempts >= v_job.max_attempts then 'dead' else 'queued' end;
begin
    update memory_private.jobs as j
    set status = v_status, last_error = left(p_error, 2000), failed_at = now(), leased_until = null, worker = null,
        run_after = case when v_status = 'queued' then now() + v_delay else j.run_after end,
        finished_at = case when v_status = 'dead' then now() end
    where j.id = p_job_id;
    return v_status;
end
$$;
grant execute on function memory.fail_job(bigint, text, text, interval) to service_role;

-- Why: a worker that stops (SIGTERM) hands back what it holds at once instead of waiting for the
-- lease to run out; the attempt does not count.
create function memory.release_job(p_job_id bigint, p_worker text)
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j
    set status = 'queued', attempts = j.attempts - 1, leased_until = null, worker = null, started_at = null
    where j.id = p_job_id;
end
$$;
grant execute on function memory.release_job(bigint, text) to service_role;

-- Why: a worker killed mid-job (SIGKILL, OOM, lost host) never completes or fails its job; the
-- reaper (pg_cron, every minute) returns expired leases to the queue, or dead-letters them.
create function memory_private.reap_expired_leases()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_reaped integer;
begin
    update memory_private.jobs as j
    set status = case when j.attempts >= j.max_attempts then 'dead' else 'queued' end,
        last_error = format('lease of worker %s expired at %s', j.worker, j.leased_until),
        failed_at = now(),
        finished_at = case when j.attempts >= j.max_attempts then now() end,
        leased_until = null, worker = null
    where j.id in (
        select x.id from memory_private.jobs as x
        where x.status = 'running' and x.leased_until < now()
        for update skip locked
    );
    get diagnostics v_reaped = row_count;
    return v_reaped;
end
$$;
grant execute on function memory_private.reap_expired_leases() to service_role;

create function memory_private.prune_finished_jobs()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_pruned integer;
begin
    -- One bounded batch per run (finished and dead jobs past job_retention); the schedule repeats.
    delete from memory_private.jobs as j
    where j.id in (
        select x.id from memory_private.jobs as x
        where x.status in ('done', 'dead')
            and x.finished_at < now() - (memory_private.setting('job_retention') #>> '{}')::interval
        limit (memory_private.setting('sweep_batch_size'))::integer
        for update skip locked
    );
    get diagnostics v_pruned = row_count;
    return v_pruned;
end
$$;
grant execute on function memory_private.prune_finished_jobs() to service_role;

-- Why: observability (seed 004): queue depth, age of the oldest waiting job, failures and
-- latency by kind, and token usage. A view for dashboards and SQL alerts; memory.job_stats()
-- serves it to workers and the Data API (the private schema is not exposed).
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
    )::bigint as tokens_last_hour
from memory_private.jobs as j
group by j.kind;
grant select on memory_private.job_stats to service_role;

create function memory.job_stats()
returns setof memory_private.job_stats
language sql
stable
set search_path = ''
as $$
    select * from memory_private.job_stats order by kind
$$;
grant execute on function memory.job_stats() to service_role;

revoke execute on all routines in schema memory, memory_private from public;
