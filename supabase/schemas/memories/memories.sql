-- Long-term memories (seeds 002 and 004): what is remembered about a user, per profile. Read
-- through the table under RLS (never shared with together-mode participants); written only through
-- the memory RPCs, so dedup, the cap, supersession and the history hold on every path. Only
-- `pinned` is directly writable.
create table memory.memories (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid,
    content text not null check (content ~ '[^[:space:]]' and length(content) <= 2000),
    type text not null references memory.memory_types (type),
    category text check (category ~ '[^[:space:]]' and length(category) <= 100),
    confidence numeric(4, 3) not null default 0.800 check (confidence between 0 and 1),
    context jsonb not null default '{}' check (jsonb_typeof(context) = 'object'),
    origin_mode text,
    source_conversation_id uuid references memory.conversations (id) on delete set null,
    source_message_id bigint references memory.messages (id) on delete set null,
    turn_index integer check (turn_index > 0),
    pinned boolean not null default false,
    active boolean not null default true,
    archived boolean not null default false,
    deleted_at timestamptz,
    expires_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    last_referenced_at timestamptz,
    reference_count integer not null default 0 check (reference_count >= 0),
    superseded_by uuid,
    search tsvector generated always as (to_tsvector('english'::regconfig, content)) stored,
    -- Seed 004's short reference ("M-143" on a chip): the user's memories numbered from 1 in the
    -- order written, each version its own (memory_private.memory_defaults).
    number integer not null check (number > 0),
    -- A memory belongs to one of its owner's profiles; deleting the profile deletes its memories.
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade,
    unique (id, user_id),
    unique (user_id, number),
    -- A successor is always a memory of the same user.
    foreign key (superseded_by, user_id) references memory.memories (id, user_id) on delete set null (superseded_by),
    constraint memories_superseded_is_inactive check (superseded_by is null or not active),
    constraint memories_not_own_successor check (superseded_by <> id),
    constraint memories_context_size check (octet_length(context::text) <= 100000)
);

comment on table memory.memories is 'Long-term memories: facts, goals, patterns ... remembered about a user and profile.';

comment on column memory.memories.active is 'False once superseded or deleted; only active memories are selected.';

comment on column memory.memories.superseded_by is 'The memory that replaced this one (an update never leaves both active).';

comment on table memory.memories is
'Long-term memories: facts, goals, patterns ... remembered about a user and profile. Read through the table; written through the memory RPCs (only pinned is directly writable).';

-- The hot reads: dedup and selection look at one user's live memories of one profile.
create index memories_live_idx on memory.memories (user_id, profile_id)
where active and not archived and deleted_at is null;

create index memories_user_id_idx on memory.memories (user_id);

create index memories_tenant_id_idx on memory.memories (tenant_id);

create index memories_profile_id_idx on memory.memories (profile_id);

create index memories_type_idx on memory.memories (type);

create index memories_source_conversation_id_idx on memory.memories (source_conversation_id);

create index memories_source_message_id_idx on memory.memories (source_message_id);

create index memories_search_idx on memory.memories using gin (search);

create index memories_content_trgm_idx on memory.memories using gin (content extensions.gin_trgm_ops);

-- A profile belongs to one user: without this the planner multiplies the two selectivities and
-- expects a handful of rows for a user with a thousand memories.
create statistics memory.memories_user_profile_stats (dependencies) on user_id, profile_id from memory.memories;

create index memories_deleted_at_idx on memory.memories (deleted_at) where deleted_at is not null;

create index memories_archive_candidates_idx on memory.memories (created_at)
where active and not archived and not pinned and deleted_at is null;

create index memories_expiry_idx on memory.memories (expires_at)
where expires_at is not null and not archived and deleted_at is null;

create index memories_superseded_by_user_id_idx on memory.memories (superseded_by, user_id);

alter table memory.memories enable row level security;

-- Together mode shares messages, never memories: no participant clause here.
create policy "Users read their memories and tenant admins read their tenant's" on memory.memories
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users pin their own memories" on memory.memories
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

grant select on memory.memories to authenticated;
grant select on memory.memories to service_role;
grant update (pinned) on memory.memories to authenticated;
grant update (pinned) on memory.memories to service_role;
