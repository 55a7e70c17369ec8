-- The work queue the Python workers claim from (extraction, summaries, titles, embeddings);
-- private, clients never see it. At-least-once delivery, idempotent results: a claim holds a lease,
-- a dead worker's lease is reaped, and dedup keys make a retried trigger or cron run add nothing.
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

comment on table memory_private.jobs is 'Work for the Python jobs: extraction, summaries, titles.';

-- One job per kind and dedup key, whatever its state: a retried trigger or cron run adds nothing.
create unique index jobs_kind_dedup_key on memory_private.jobs (kind, dedup_key) where dedup_key is not null;

create index jobs_claimable_idx on memory_private.jobs (kind, run_after, id) where status = 'queued';

create index jobs_leased_idx on memory_private.jobs (leased_until) where status = 'running';

create index jobs_finished_idx on memory_private.jobs (finished_at) where status in ('done', 'dead');

-- job_stats' dead jobs and failures of the last hour, few against the finished jobs kept.
create index jobs_dead_idx on memory_private.jobs (kind) where status = 'dead';

create index jobs_failed_idx on memory_private.jobs (failed_at) where failed_at is not null;

create index jobs_user_id_idx on memory_private.jobs (user_id);

create index jobs_pending_extractions_idx on memory_private.jobs (user_id, status, run_after)
where kind = 'extract' and status in ('queued', 'running');

create index jobs_queued_by_user_idx on memory_private.jobs (user_id, run_after, id) where status = 'queued';

-- A user's earliest queued job of a kind (memory_private.job_waiters).
create index jobs_queued_kind_user_idx on memory_private.jobs (kind, user_id, run_after) where status = 'queued';

create index jobs_user_started_idx on memory_private.jobs (user_id, started_at) where started_at is not null;

alter table memory_private.jobs enable row level security;

grant select, insert, update, delete on memory_private.jobs to service_role;
