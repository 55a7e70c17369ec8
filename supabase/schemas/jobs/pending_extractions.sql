-- Why: a turn notes its question here instead of queueing a job: one narrow row and one index
-- on the write path, where a job row costs a speculative insert into a table of six indexes on
-- queued rows and a foreign key check. Workers turn the notes into jobs when they claim
-- (memory_private.queue_pending_extractions), and a pg_cron job every minute does the same, so no
-- note waits for a worker that never asks for extractions. Private: only the kit's functions
-- touch it.
create table memory_private.pending_extractions (
    message_id bigint not null,
    noted_at timestamptz not null default now(),
    -- The question's author when noted: a claim for some users' work takes their notes by key.
    user_id uuid not null,
    primary key (user_id, message_id)
);

comment on table memory_private.pending_extractions is
'User messages whose turn opened the memory gate, waiting to become extract jobs.';

alter table memory_private.pending_extractions enable row level security;

grant select on memory_private.pending_extractions to service_role;
