-- Long-term memories (seeds 002 and 004): the record, the gate that decides whether a
-- conversation may create one, and the append-only history of every change.

insert into memory_private.settings (key, value, description) values
('dedup_threshold', '0.85', 'Trigram similarity at or above which a new memory is a duplicate of an active one.');

-- Type weights are data: selection multiplies by them, and a team can retune them with an update.
-- Seed 004 fixes goal, pattern, relationship, fact and emotion; the seed 002 types sit between:
-- decisions and preferences steer answers nearly as much as goals, projects a little more than a
-- plain fact, entities (names, places) are reference material.
create table memory.memory_types (
    type text primary key check (type ~ '^[a-z_]+$'),
    weight numeric(3, 2) not null check (weight > 0),
    description text not null
);
alter table memory.memory_types enable row level security;
create policy "Signed-in users read memory types" on memory.memory_types
for select to authenticated
using (true);
grant select on memory.memory_types to authenticated;
grant select, insert, update, delete on memory.memory_types to service_role;

insert into memory.memory_types (type, weight, description) values
('goal', 1.50, 'Something the user wants to achieve (seed 004).'),
('pattern', 1.50, 'A recurring behaviour or tendency (seed 004).'),
('relationship', 1.30, 'A person in the user''s life and how they relate (seed 004).'),
('decision', 1.20, 'A choice the user has made (seed 002).'),
('preference', 1.20, 'How the user likes things done (seed 002).'),
('project', 1.10, 'Ongoing work the user is doing (seed 002).'),
('fact', 1.00, 'A fact about the user (seeds 002, 004).'),
('entity', 0.90, 'A named thing the user refers to (seed 002).'),
('emotion', 0.80, 'How the user felt (seed 004).');

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
    -- A memory belongs to one of its owner's profiles; deleting the profile deletes its memories.
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade,
    unique (id, user_id),
    -- A successor is always a memory of the same user.
    foreign key (superseded_by, user_id) references memory.memories (id, user_id) on delete set null (superseded_by),
    constraint memories_superseded_is_inactive check (superseded_by is null or not active),
    constraint memories_not_own_successor check (superseded_by <> id)
);
-- The hot reads: dedup and selection look at one user's live memories of one profile.
create index memories_live_idx on memory.memories (user_id, profile_id)
where active and not archived and deleted_at is null;
create index memories_user_id_idx on memory.memories (user_id);
create index memories_tenant_id_idx on memory.memories (tenant_id);
create index memories_profile_id_idx on memory.memories (profile_id);
create index memories_type_idx on memory.memories (type);
create index memories_source_conversation_id_idx on memory.memories (source_conversation_id);
create index memories_source_message_id_idx on memory.memories (source_message_id);
create index memories_superseded_by_idx on memory.memories (superseded_by);
create index memories_search_idx on memory.memories using gin (search);
create index memories_content_trgm_idx on memory.memories using gin (content extensions.gin_trgm_ops);
-- A profile belongs to one user: without this the planner multiplies the two selectivities and
-- expects a handful of rows for a user with a thousand memories.
create statistics memory.memories_user_profile_stats (dependencies) on user_id, profile_id from memory.memories;
comment on table memory.memories is 'Long-term memories: facts, goals, patterns ... remembered about a user and profile.';
comment on column memory.memories.active is 'False once superseded or deleted; only active memories are selected.';
comment on column memory.memories.superseded_by is 'The memory that replaced this one (an update never leaves both active).';

-- Why: seed 004's key rule. A conversation may create a memory for a user only when the profile
-- that user selected in it is their primary profile, they wrote the source message, the
-- conversation's "remember" toggle is on (off by default in swiss mode) and they have not paused
-- memory. Generic chats (no profile) never do. Returns the reason when it says no. Internal (the
-- turn trigger asks it about any participant); callers go through memory_gate.
create function memory_private.gate_reason(p_user_id uuid, p_message_id bigint)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_message memory.messages;
    v_conversation memory.conversations;
    v_profile_id uuid;
begin
    select m.* into v_message from memory.messages as m where m.id = p_message_id;
    if not found then
        return 'source message not found';
    end if;
    if coalesce(v_message.author_id, v_message.user_id) <> p_user_id or v_message.role <> 'user' then
        return 'the user did not write the source message';
    end if;
    select c.* into v_conversation from memory.conversations as c where c.id = v_message.conversation_id;
    v_profile_id := case
        when v_conversation.user_id = p_user_id then v_conversation.profile_id
        else (select p.profile_id from memory.participants as p
              where p.conversation_id = v_conversation.id and p.user_id = p_user_id)
    end;
    if v_profile_id is null then
        return 'no profile is selected in the conversation';
    end if;
    if not exists (
        select 1 from memory.profiles as p where p.id = v_profile_id and p.user_id = p_user_id and p.is_primary
    ) then
        return 'the selected profile is not the user''s primary profile';
    end if;
    if not v_conversation.remember then
        return 'remember is off in this conversation';
    end if;
    if (select u.memory_paused from memory.users as u where u.id = p_user_id) then
        return 'the user has paused memory';
    end if;
    return null;
end
$$;

-- Why: the gate as callers may ask it: a signed-in caller only about themselves (anything else
-- reads as not found, so it reveals nothing of other users).
create function memory_private.memory_gate(p_user_id uuid, p_message_id bigint)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    if (select auth.uid()) is not null and p_user_id is distinct from (select auth.uid()) then
        return 'source message not found';
    end if;
    return memory_private.gate_reason(p_user_id, p_message_id);
end
$$;
grant execute on function memory_private.memory_gate(uuid, bigint) to authenticated, service_role;

-- Why: the profile a memory belongs to is decided in one place: the one the gate checked for a
-- memory from a conversation, else the one asked for, else the user's primary profile.
create function memory_private.memory_profile(p_user_id uuid, p_message_id bigint, p_profile_id uuid)
returns uuid
language sql
stable
security definer
set search_path = ''
as $$
    -- A signed-in caller learns nothing about anyone else's profiles.
    select case when (select auth.uid()) is null or p_user_id = (select auth.uid()) then coalesce(
        (select case when c.user_id = p_user_id then c.profile_id else p.profile_id end
         from memory.messages as m
         join memory.conversations as c on c.id = m.conversation_id
         left join memory.participants as p on p.conversation_id = c.id and p.user_id = p_user_id
         where m.id = p_message_id and (c.user_id = p_user_id or p.user_id is not null)),
        p_profile_id,
        (select p.id from memory.profiles as p where p.user_id = p_user_id and p.is_primary)
    ) end
$$;
grant execute on function memory_private.memory_profile(uuid, bigint, uuid) to authenticated, service_role;

-- Why: the gate holds for every write path, so the table enforces it: a memory that names a
-- source message takes that message's conversation, turn and mode, and is refused (42501)
-- unless the gate opens. Memories a user writes by hand (no source message) need no gate.
create function memory_private.memory_defaults()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_reason text;
    v_message memory.messages;
begin
    -- Another user's row is RLS's to refuse (42501); resolve nothing for it here. Cascades
    -- (an owner deleting a together conversation) run as postgres with the caller's claims.
    if (select auth.uid()) is not null and new.user_id is distinct from (select auth.uid()) then
        return new;
    end if;
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if new.source_message_id is not null
        and (tg_op = 'INSERT' or new.source_message_id is distinct from old.source_message_id) then
        v_reason := memory_private.memory_gate(new.user_id, new.source_message_id);
        if v_reason is not null then
            raise exception using errcode = '42501', message = 'memory not allowed: ' || v_reason;
        end if;
        select m.* into v_message from memory.messages as m where m.id = new.source_message_id;
        new.source_conversation_id := v_message.conversation_id;
        new.turn_index := v_message.turn_number;
        new.origin_mode := (select c.mode from memory.conversations as c where c.id = v_message.conversation_id);
    end if;
    new.profile_id := memory_private.memory_profile(new.user_id, new.source_message_id, new.profile_id);
    if new.profile_id is null then
        raise exception using errcode = '23502', message = 'memory needs a profile',
            hint = 'Create a primary profile for the user, or pass one.';
    end if;
    return new;
end
$$;

create trigger memories_defaults
before insert or update of user_id, tenant_id, source_message_id, profile_id on memory.memories
for each row execute function memory_private.memory_defaults();

-- Why: every change (pin, delete, supersede, reference ...) moves updated_at, unless the writer
-- set it explicitly (an import restoring a record as it was).
create function memory_private.touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if new.updated_at is not distinct from old.updated_at then
        new.updated_at := now();
    end if;
    return new;
end
$$;

create trigger memories_touch_updated_at
before update on memory.memories
for each row execute function memory_private.touch_updated_at();

-- The audit trail: every change to a memory, with old and new content, actor and time.
create table memory.memory_events (
    id bigint generated always as identity primary key,
    memory_id uuid not null,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    event text not null check (event in (
        'add', 'update', 'supersede', 'delete', 'restore', 'archive', 'unarchive', 'pin', 'unpin', 'reference'
    )),
    old_content text,
    new_content text,
    details jsonb not null default '{}',
    actor_id uuid,
    actor_role text not null,
    created_at timestamptz not null default now()
);
create index memory_events_memory_id_idx on memory.memory_events (memory_id, id);
create index memory_events_user_id_idx on memory.memory_events (user_id);
create index memory_events_tenant_id_idx on memory.memory_events (tenant_id);
comment on table memory.memory_events is 'Append-only history of every memory change; only erasing the user removes it.';

-- Why: history written by the application can be skipped or forged; written by trigger in the
-- same transaction, it cannot. One change may be several events (e.g. unpin and delete).
create function memory_private.record_memory_event()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_events text [] := '{}';
    v_event text;
begin
    if tg_op = 'INSERT' then
        v_events := array['add'];
    else
        if new.superseded_by is not null and old.superseded_by is null then
            v_events := v_events || 'supersede'::text;
        elsif new.deleted_at is not null and old.deleted_at is null then
            v_events := v_events || 'delete'::text;
        elsif new.deleted_at is null and old.deleted_at is not null then
            v_events := v_events || 'restore'::text;
        end if;
        -- A reinforced memory may gain confidence; that is part of its 'reference' event.
        if new.content <> old.content or new.type <> old.type or new.category is distinct from old.category
            or new.context <> old.context
            or (new.confidence <> old.confidence and new.reference_count = old.reference_count) then
            v_events := v_events || 'update'::text;
        end if;
        if new.archived and not old.archived then
            v_events := v_events || 'archive'::text;
        elsif old.archived and not new.archived then
            v_events := v_events || 'unarchive'::text;
        end if;
        if new.pinned and not old.pinned then
            v_events := v_events || 'pin'::text;
        elsif old.pinned and not new.pinned then
            v_events := v_events || 'unpin'::text;
        end if;
        if new.reference_count > old.reference_count then
            v_events := v_events || 'reference'::text;
        end if;
    end if;
    foreach v_event in array v_events loop
        insert into memory.memory_events (
            memory_id, user_id, tenant_id, event, old_content, new_content, details, actor_id, actor_role
        ) values (
            new.id, new.user_id, new.tenant_id, v_event,
            case when tg_op = 'UPDATE' then old.content end, new.content,
            case v_event
                when 'supersede' then jsonb_build_object('superseded_by', new.superseded_by)
                when 'reference' then jsonb_build_object(
                    'reference_count', new.reference_count, 'confidence', new.confidence
                )
                else '{}'::jsonb
            end,
            (select auth.uid()),
            -- current_user is this function's owner here; the `role` setting is the caller's role.
            coalesce(nullif(current_setting('role'), 'none'), session_user)
        );
    end loop;
    return null;
end
$$;

create trigger memories_record_event
after insert or update on memory.memories
for each row execute function memory_private.record_memory_event();

-- Why: history is append-only. No role is granted update or delete on it; this guard also stops
-- the table owner, except for the cascade that erasing a user performs.
create function memory_private.guard_memory_events()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'DELETE' and not exists (select 1 from memory.users as u where u.id = old.user_id) then
        return old;
    end if;
    raise exception using errcode = '42501', message = 'memory history is append-only';
end
$$;

create trigger memory_events_append_only
before update or delete on memory.memory_events
for each row execute function memory_private.guard_memory_events();

alter table memory.memories enable row level security;
alter table memory.memory_events enable row level security;

-- Together mode shares messages, never memories: no participant clause here.
create policy "Users read their memories and tenant admins read their tenant's" on memory.memories
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users add their own memories" on memory.memories
for insert to authenticated
with check (user_id = (select auth.uid()));

create policy "Users update their own memories" on memory.memories
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

create policy "Users delete their own memories" on memory.memories
for delete to authenticated
using (user_id = (select auth.uid()));

create policy "Users and their tenant admins read memory history" on memory.memory_events
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

grant select, delete on memory.memories to authenticated;
grant insert (
    user_id, profile_id, content, type, category, confidence, context, source_message_id, pinned, expires_at
) on memory.memories to authenticated;
grant update (
    content, type, category, confidence, context, pinned, archived, deleted_at, active, expires_at, superseded_by
) on memory.memories to authenticated;
grant select on memory.memory_events to authenticated;
grant select, insert, update, delete on memory.memories to service_role;
grant select on memory.memory_events to service_role;

revoke execute on all routines in schema memory, memory_private from public;
