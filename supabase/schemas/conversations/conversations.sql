-- One model for every seed: seed 000's running chat (10-turn window, 24-hour TTL), seed 001's
-- sessions and seed 002's permanent conversations differ only in the retention policy fixed on the
-- row when it is created. Owners write; together-mode participants and tenant admins read.
create table memory.conversations (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid,
    title text check (title ~ '[^[:space:]]'),
    mode text not null default 'chat' check (mode in ('chat', 'astro', 'profile', 'together', 'swiss')),
    remember boolean not null,
    archived boolean not null default false,
    metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
    ttl interval check (ttl > interval '0'),
    window_turns integer check (window_turns > 0),
    last_turn integer not null default 0 check (last_turn >= 0),
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    expires_at timestamptz,
    unique (id, user_id),
    -- The profile must be the owner's; deleting it only detaches the conversation (PG 15 column list).
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete set null (profile_id),
    constraint conversations_title_length check (length(title) <= 500),
    constraint conversations_metadata_size check (octet_length(metadata::text) <= 100000)
);

comment on table memory.conversations is 'A conversation (seed 002) or session (seed 001) with its retention policy.';

comment on column memory.conversations.remember is 'The "Remember in this chat" toggle; defaults to off in swiss mode.';

comment on column memory.conversations.ttl is 'Messages expire this long after they are written; null keeps them.';

comment on column memory.conversations.window_turns is 'Rolling window: only the newest N turns are kept; null keeps all.';

comment on column memory.conversations.last_turn is 'Highest turn number handed out; the row lock on it keeps turns gap-free.';

create index conversations_user_recent_idx on memory.conversations (user_id, updated_at desc) where not archived;

create index conversations_user_id_idx on memory.conversations (user_id);

create index conversations_tenant_id_idx on memory.conversations (tenant_id);

-- The sweep walks expired conversations in (expiry, id) order and resumes where it stopped.
create index conversations_expires_at_idx on memory.conversations (expires_at, id) where expires_at is not null;

create index conversations_profile_id_user_id_idx on memory.conversations (profile_id, user_id);

alter table memory.conversations enable row level security;

create policy "Users, participants and tenant admins read conversations" on memory.conversations
for select to authenticated
using (
    (expires_at is null or expires_at > now())
    and (
        user_id = (select auth.uid())
        or id = any((select memory_private.joined_conversations())::uuid[])
        or tenant_id = any((select memory_private.administered_tenants())::uuid[])
    )
);

create policy "Users create their own conversations" on memory.conversations
for insert to authenticated
with check (user_id = (select auth.uid()));

create policy "Users update their own conversations" on memory.conversations
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

create policy "Users delete their own conversations" on memory.conversations
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.conversations to authenticated;
grant select, insert, update, delete on memory.conversations to service_role;
grant insert (
    id, user_id, profile_id, title, mode, remember, archived, metadata, ttl, window_turns
) on memory.conversations to authenticated;
grant update (profile_id, title, mode, remember, archived, metadata) on memory.conversations to authenticated;
