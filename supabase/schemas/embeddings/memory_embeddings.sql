-- Why: search by meaning ("my knee hurts" finds "running injury"): one vector per memory, under the
-- model that made it; only the current model's count, so a model change re-embeds through the queue
-- while search goes on. Private (not in the Data API): users read their own, jobs write.
-- A memory whose text the server refused (too long for the model, say) keeps that refusal instead,
-- under the same model: it is not sent again, and search finds it by its words alone.
create table memory_private.memory_embeddings (
    memory_id uuid primary key references memory.memories (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    model text not null,
    embedding extensions.halfvec,
    created_at timestamptz not null default now(),
    -- Why the embeddings server refused the text, for a row that has no vector of the model.
    refused text check (refused ~ '[^[:space:]]' and length(refused) <= 500),
    constraint memory_embeddings_vector_or_refusal check ((embedding is null) <> (refused is null))
);

comment on table memory_private.memory_embeddings is
'One vector per memory (or the server''s refusal of its text), under the model that made it; '
'only the current model''s count.';

create index memory_embeddings_user_model_idx on memory_private.memory_embeddings (user_id, model);

-- The refused rows, for memory.retry_refused_embeddings: a few, among every vector.
create index memory_embeddings_refused_idx on memory_private.memory_embeddings (user_id) where refused is not null;

alter table memory_private.memory_embeddings enable row level security;

create policy "Users read the vectors of their own memories" on memory_private.memory_embeddings
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.memory_embeddings to authenticated;
grant select, insert, update, delete on memory_private.memory_embeddings to service_role;
