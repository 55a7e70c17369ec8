-- Why: search by meaning ("my knee hurts" finds "running injury"): one vector per message, under
-- the model that made it; only the current model's count, so a model change re-embeds through the
-- queue while search goes on. Private (not in the Data API): users read their own, jobs write.
create table memory_private.message_embeddings (
    message_id bigint primary key references memory.messages (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    model text not null,
    embedding extensions.halfvec not null,
    created_at timestamptz not null default now()
);

comment on table memory_private.message_embeddings is
'One vector per message, under the model that made it; only the current model''s count.';

create index message_embeddings_user_model_idx on memory_private.message_embeddings (user_id, model);

alter table memory_private.message_embeddings enable row level security;

create policy "Users read the vectors of their own messages" on memory_private.message_embeddings
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.message_embeddings to authenticated;
grant select, insert, update, delete on memory_private.message_embeddings to service_role;
