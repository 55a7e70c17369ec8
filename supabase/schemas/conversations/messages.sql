-- The messages of every conversation (seeds 002, 003); a turn is a user message and its answer
-- under one turn number. user_id is always the conversation's owner, so policies need no join. Size
-- limits keep one request from storing megabytes that every prompt, search and export carries.
create table memory.messages (
    id bigint generated always as identity primary key,
    conversation_id uuid not null,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    -- An author never becomes NULL (which would read as the owner): their messages go instead.
    author_id uuid references memory.users (id) on delete cascade,
    role text not null check (role in ('user', 'assistant')),
    content text not null check (content ~ '[^[:space:]]'),
    turn_number integer not null check (turn_number > 0),
    tool_calls jsonb check (jsonb_typeof(tool_calls) = 'array'),
    suggested_values jsonb,
    suggested_actions jsonb,
    custom_payload jsonb,
    metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
    used_memory_ids uuid[] not null default '{}',
    created_at timestamptz not null default now(),
    expires_at timestamptz,
    search tsvector generated always as (to_tsvector('english'::regconfig, content)) stored,
    -- An answer's rating by the one who asked (memory.rate_answer): seed 004's helpfulness.
    helpful boolean,
    -- The owner is always the conversation's owner: policies filter on it without a join.
    foreign key (conversation_id, user_id) references memory.conversations (id, user_id) on delete cascade,
    constraint messages_content_length check (length(content) <= 100000),
    -- Tool calls carry a tool's input and output (seed 002), so they get the most room.
    constraint messages_tool_calls_size check (octet_length(tool_calls::text) <= 1000000),
    constraint messages_suggested_values_size check (octet_length(suggested_values::text) <= 100000),
    constraint messages_suggested_actions_size check (octet_length(suggested_actions::text) <= 100000),
    constraint messages_custom_payload_size check (octet_length(custom_payload::text) <= 100000),
    constraint messages_metadata_size check (octet_length(metadata::text) <= 100000)
);

comment on table memory.messages is 'Messages (seeds 002, 003); a turn is a user message and the answer with the same turn number.';

comment on column memory.messages.user_id is 'The conversation owner, whose memory this is.';

comment on column memory.messages.author_id is 'Who wrote it: the owner or, in together mode, a participant.';

comment on column memory.messages.used_memory_ids is 'Memories the assistant was given to answer (seed 004 memory chips).';

comment on column memory.messages.search is 'The message''s lexemes (english), for search_messages.';

-- One message per role and turn; `role desc` puts the user message before the answer, so both
-- oldest-first and newest-first reads walk this index in order and stop at their limit.
create unique index messages_conversation_turn_role_key on memory.messages (conversation_id, turn_number, role desc);

-- A user's messages, and their newest ids (what the search-term fold has not reached yet).
create index messages_user_id_idx on memory.messages (user_id, id);

create index messages_tenant_id_idx on memory.messages (tenant_id);

create index messages_author_id_idx on memory.messages (author_id);

-- The sweep walks expired messages in (expiry, id) order and resumes where it stopped.
create index messages_expires_at_idx on memory.messages (expires_at, id) where expires_at is not null;

create unique index messages_client_turn_id_key
on memory.messages (user_id, (metadata ->> 'client_turn_id'), role)
where metadata ? 'client_turn_id';

comment on index memory.messages_client_turn_id_key is
'A client turn id is stored once per user and role: buffered turns are written back exactly once.';

alter table memory.messages enable row level security;

create policy "Owners, participants and tenant admins read live messages" on memory.messages
for select to authenticated
using (
    (expires_at is null or expires_at > now())
    and (
        user_id = (select auth.uid())
        or conversation_id = any((select memory_private.joined_conversations())::uuid[])
        or tenant_id = any((select memory_private.administered_tenants())::uuid[])
    )
);

create policy "Owners update their messages" on memory.messages
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

create policy "Owners delete their messages" on memory.messages
for delete to authenticated
using (user_id = (select auth.uid()));

create policy "Owners and participants write messages to their conversations" on memory.messages
for insert to authenticated
with check (
    user_id = (select auth.uid())
    or conversation_id = any((select memory_private.joined_conversations())::uuid[])
);

grant select, delete on memory.messages to authenticated;
grant select, insert, update, delete on memory.messages to service_role;
grant insert (
    conversation_id, author_id, role, content, turn_number, tool_calls, suggested_values,
    suggested_actions, custom_payload, metadata, used_memory_ids
) on memory.messages to authenticated;
grant update (metadata, used_memory_ids) on memory.messages to authenticated;
