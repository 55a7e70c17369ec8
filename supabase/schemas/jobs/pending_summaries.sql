-- Why: every summary_interval turns a turn notes its conversation's summary here instead of
-- queueing a job: one narrow row and one index on the write path, where a job row costs a
-- speculative insert into a table of seven indexes, a foreign key check and the waiters' statement
-- trigger (about a tenth of a windowed turn's time, averaged over the turns). Workers that claim
-- summaries turn the notes into jobs (memory_private.queue_pending_summaries), and a pg_cron job
-- every minute does the same. A note names only its conversation and turns: a conversation
-- deleted meanwhile leaves a note that just goes. Private: only the kit's functions touch it.
create table memory_private.pending_summaries (
    conversation_id uuid not null,
    to_turn integer not null check (to_turn > 0),
    turns integer not null check (turns > 0 and turns <= to_turn),
    noted_at timestamptz not null default now(),
    primary key (conversation_id, to_turn)
);

comment on table memory_private.pending_summaries is
'Conversation summaries due (turns to_turn - turns + 1 to to_turn), waiting to become summarize_conversation jobs.';

alter table memory_private.pending_summaries enable row level security;

grant select on memory_private.pending_summaries to service_role;
