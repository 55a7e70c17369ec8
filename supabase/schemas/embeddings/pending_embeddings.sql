-- Why: an embed job reads the messages waiting for a vector from here, so its input and its check
-- for more cost what waits, not the user's history (looking for messages without a vector walked
-- every message the user has, twice a job, and a re-embed after a model change read its batches
-- from ever deeper in the history). A message notes itself when it is written (assign_turn, the
-- import), and again when its vector is dropped (an edit, its context deleted, a new model); the
-- job that stores its vector takes the note away (a note whose message was deleted first is
-- dropped by the user's next job; an erased user's go with the user). Keyed by user first: a job
-- reads its user's notes, and the minutely scan finds the users with notes by skipping from one
-- to the next.
-- Private: only the kit's functions touch it.
create table memory_private.pending_embeddings (
    user_id uuid not null references memory.users (id) on delete cascade,
    message_id bigint not null,
    primary key (user_id, message_id)
);

comment on table memory_private.pending_embeddings is
'Messages waiting for a vector of the current embedding model, by user.';

alter table memory_private.pending_embeddings enable row level security;

grant select, insert, delete on memory_private.pending_embeddings to service_role;
