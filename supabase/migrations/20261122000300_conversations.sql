-- Conversations, their participants and messages; turns are a view over message pairs.
--
-- One model serves every seed: seed 000's per-user current conversation with a 10-turn window
-- and a 24-hour TTL, seed 001's 24-hour sessions and seed 002's permanent conversations are
-- conversations with different retention policies. Retention defaults come from the tenant, then
-- from memory_private.settings, and are fixed on the conversation when it is created.

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
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete set null (profile_id)
);
create index conversations_user_recent_idx on memory.conversations (user_id, updated_at desc) where not archived;
create index conversations_user_id_idx on memory.conversations (user_id);
create index conversations_tenant_id_idx on memory.conversations (tenant_id);
create index conversations_profile_id_idx on memory.conversations (profile_id);
create index conversations_expires_at_idx on memory.conversations (expires_at) where expires_at is not null;
comment on table memory.conversations is 'A conversation (seed 002) or session (seed 001) with its retention policy.';
comment on column memory.conversations.remember is 'The "Remember in this chat" toggle; defaults to off in swiss mode.';
comment on column memory.conversations.ttl is 'Messages expire this long after they are written; null keeps them.';
comment on column memory.conversations.window_turns is 'Rolling window: only the newest N turns are kept; null keeps all.';
comment on column memory.conversations.last_turn is 'Highest turn number handed out; the row lock on it keeps turns gap-free.';

create table memory.participants (
    conversation_id uuid not null references memory.conversations (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid,
    joined_at timestamptz not null default now(),
    primary key (conversation_id, user_id),
    -- Seed 004: each participant picks their own profile; memory follows it, not the owner's.
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete set null (profile_id)
);
create index participants_user_id_idx on memory.participants (user_id);
create index participants_tenant_id_idx on memory.participants (tenant_id);
create index participants_profile_id_idx on memory.participants (profile_id);
comment on table memory.participants is 'Together mode: people who share a conversation''s messages, never its memories.';

create table memory.messages (
    id bigint generated always as identity primary key,
    conversation_id uuid not null,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    author_id uuid references memory.users (id) on delete set null,
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
    -- The owner is always the conversation's owner: policies filter on it without a join.
    foreign key (conversation_id, user_id) references memory.conversations (id, user_id) on delete cascade
);
-- One message per role and turn; `role desc` puts the user message before the answer, so both
-- oldest-first and newest-first reads walk this index in order and stop at their limit.
create unique index messages_conversation_turn_role_key on memory.messages (conversation_id, turn_number, role desc);
create index messages_user_id_idx on memory.messages (user_id);
create index messages_tenant_id_idx on memory.messages (tenant_id);
create index messages_author_id_idx on memory.messages (author_id);
create index messages_expires_at_idx on memory.messages (expires_at) where expires_at is not null;
comment on table memory.messages is 'Messages (seeds 002, 003); a turn is a user message and the answer with the same turn number.';
comment on column memory.messages.user_id is 'The conversation owner, whose memory this is.';
comment on column memory.messages.author_id is 'Who wrote it: the owner or, in together mode, a participant.';
comment on column memory.messages.used_memory_ids is 'Memories the assistant was given to answer (seed 004 memory chips).';

-- Why: defaults that depend on other columns or on the tenant cannot be column defaults.
create function memory_private.conversation_defaults()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_tenant memory.tenants;
begin
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if tg_op = 'INSERT' then
        select t.* into v_tenant from memory.tenants as t where t.id = new.tenant_id;
        new.remember := coalesce(new.remember, new.mode <> 'swiss');
        new.ttl := coalesce(
            new.ttl, v_tenant.conversation_ttl, (memory_private.setting('conversation_ttl') #>> '{}')::interval
        );
        new.window_turns := coalesce(
            new.window_turns, v_tenant.conversation_window, (memory_private.setting('conversation_window') #>> '{}')::integer
        );
        if new.ttl <= interval '0' then
            raise exception using errcode = '23514', message = 'ttl must be positive';
        end if;
        new.expires_at := new.created_at + new.ttl;
    end if;
    return new;
end
$$;

create trigger conversations_defaults
before insert or update of user_id, tenant_id on memory.conversations
for each row execute function memory_private.conversation_defaults();

-- Why: tenants are isolated; a participant from another tenant would let that tenant's admin
-- read this conversation (and hide it from this tenant's admin).
create function memory_private.check_participant_tenant()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if (select u.tenant_id from memory.users as u where u.id = new.user_id) is distinct from (
        select c.tenant_id from memory.conversations as c where c.id = new.conversation_id
    ) then
        raise exception using errcode = '22023', message = 'participants must belong to the conversation''s tenant';
    end if;
    return null;
end
$$;

-- A constraint trigger fires after the row passed RLS, so a caller without rights gets 42501 first.
create constraint trigger participants_check_tenant
after insert or update of user_id, conversation_id on memory.participants
for each row execute function memory_private.check_participant_tenant();

create trigger participants_inherit_tenant
before insert or update of user_id, tenant_id on memory.participants
for each row execute function memory_private.inherit_tenant();

-- Why: turn numbers must be unique and gap-free under concurrent writers, the rolling window and
-- the TTL must hold for every write path (RPC, Data API insert, service jobs). So the table itself
-- numbers its messages: the conversation row lock serializes writers, and a rollback also rolls
-- back the counter, so no number is ever skipped.
create function memory_private.assign_turn()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_conversation memory.conversations;
    v_next integer;
    v_join boolean;
begin
    select c.* into v_conversation from memory.conversations as c where c.id = new.conversation_id for update;
    if not found or v_conversation.expires_at <= now() then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if (select auth.uid()) is not null and v_conversation.user_id <> (select auth.uid()) then
        raise exception using errcode = '42501', message = 'only the owner writes to a conversation';
    end if;
    if v_conversation.archived then
        raise exception using errcode = '55000', message = 'conversation is archived',
            hint = 'Unarchive it before adding messages.';
    end if;
    -- An answer joins the open turn; a user message, or an answer with no open turn, opens one.
    v_join := new.role = 'assistant' and v_conversation.last_turn > 0 and not exists (
        select 1 from memory.messages as m
        where m.conversation_id = new.conversation_id
            and m.turn_number = v_conversation.last_turn
            and m.role = 'assistant'
    );
    v_next := case when v_join then v_conversation.last_turn else v_conversation.last_turn + 1 end;
    if new.turn_number < 1 then
        raise exception using errcode = '23514', message = format('turn number %s must be positive', new.turn_number);
    end if;
    if new.turn_number is not null and new.turn_number <> v_next then
        if new.turn_number <= v_conversation.last_turn then
            raise exception using errcode = '23505', message = format('turn %s already exists', new.turn_number),
                detail = format('the next turn number for this %s message is %s', new.role, v_next);
        end if;
        raise exception using errcode = '23514', message = format('turn %s would leave a gap', new.turn_number),
            detail = format('the next turn number for this %s message is %s', new.role, v_next);
    end if;
    new.turn_number := v_next;
    new.user_id := v_conversation.user_id;
    new.tenant_id := v_conversation.tenant_id;
    new.created_at := now();
    new.expires_at := now() + v_conversation.ttl;
    -- Only a new turn moves the conversation (an answer joining its turn needs no second update),
    -- and pushes exactly one turn out of the window: older ones left it on earlier turns.
    if not v_join then
        update memory.conversations as c
        set last_turn = v_next, updated_at = now(), expires_at = now() + c.ttl
        where c.id = new.conversation_id;
        if v_conversation.window_turns is not null then
            delete from memory.messages as m
            where m.conversation_id = new.conversation_id
                and m.turn_number = v_next - v_conversation.window_turns;
        end if;
    end if;
    return new;
end
$$;

create trigger messages_assign_turn
before insert on memory.messages
for each row execute function memory_private.assign_turn();

-- Why: an author must belong to the conversation; otherwise a together-mode message could be
-- attributed to a stranger and later feed that stranger's memory.
create function memory_private.check_message_author()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if new.author_id is not null and new.author_id <> new.user_id and not exists (
        select 1 from memory.participants as p
        where p.conversation_id = new.conversation_id and p.user_id = new.author_id
    ) then
        raise exception using
            errcode = '23503',
            message = 'message author is not a participant of the conversation',
            detail = format('author %s, conversation %s', new.author_id, new.conversation_id);
    end if;
    return new;
end
$$;

create trigger messages_check_author
before insert or update of author_id on memory.messages
for each row execute function memory_private.check_message_author();

-- Why: together-mode policies need "conversations I take part in" without exposing the
-- participant lists of other conversations and without policies that recurse into each other.
create function memory_private.joined_conversations()
returns uuid[]
language sql
stable
security definer
set search_path = ''
as $$
    select coalesce(array_agg(p.conversation_id), '{}')
    from memory.participants as p
    where p.user_id = (select auth.uid())
$$;
grant execute on function memory_private.joined_conversations() to authenticated, service_role;

alter table memory.conversations enable row level security;
alter table memory.participants enable row level security;
alter table memory.messages enable row level security;

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

create policy "Participants, owners and tenant admins read participants" on memory.participants
for select to authenticated
using (
    user_id = (select auth.uid())
    or conversation_id = any((select memory_private.joined_conversations())::uuid[])
    or exists (
        select 1 from memory.conversations as c
        where c.id = conversation_id and c.user_id = (select auth.uid())
    )
    or tenant_id = any((select memory_private.administered_tenants())::uuid[])
);

create policy "Owners add participants" on memory.participants
for insert to authenticated
with check (
    exists (
        select 1 from memory.conversations as c
        where c.id = conversation_id and c.user_id = (select auth.uid())
    )
);

create policy "Participants choose their own profile" on memory.participants
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

create policy "Owners remove participants and participants leave" on memory.participants
for delete to authenticated
using (
    user_id = (select auth.uid())
    or exists (
        select 1 from memory.conversations as c
        where c.id = conversation_id and c.user_id = (select auth.uid())
    )
);

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

create policy "Owners write messages to their conversations" on memory.messages
for insert to authenticated
with check (user_id = (select auth.uid()));

create policy "Owners update their messages" on memory.messages
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

create policy "Owners delete their messages" on memory.messages
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.conversations to authenticated;
grant insert (id, user_id, profile_id, title, mode, remember, archived, metadata, ttl, window_turns)
on memory.conversations to authenticated;
-- last_turn, updated_at and expires_at are only ever moved by memory_private.assign_turn.
grant update (profile_id, title, mode, remember, archived, metadata) on memory.conversations to authenticated;
grant select, insert, delete on memory.participants to authenticated;
grant update (profile_id) on memory.participants to authenticated;
grant select, delete on memory.messages to authenticated;
-- Owner, tenant, turn number and expiry come from the conversation (memory_private.assign_turn).
grant insert (
    conversation_id, author_id, role, content, turn_number, tool_calls, suggested_values,
    suggested_actions, custom_payload, metadata, used_memory_ids
) on memory.messages to authenticated;
grant update (used_memory_ids, metadata) on memory.messages to authenticated;
grant select, insert, update, delete on memory.conversations, memory.participants, memory.messages to service_role;

-- Seeds 000 and 001 speak of turns: a user message and its answer. Grouping by the turn keys lets
-- a filter on conversation_id and turn_number reach the messages index through the view.
create view memory.turns with (security_invoker = true) as
select
    m.conversation_id,
    m.user_id,
    m.tenant_id,
    m.turn_number,
    min(m.id) filter (where m.role = 'user') as user_message_id,
    min(m.id) filter (where m.role = 'assistant') as assistant_message_id,
    max(m.content) filter (where m.role = 'user') as user_content,
    max(m.content) filter (where m.role = 'assistant') as assistant_content,
    coalesce(
        (array_agg(m.metadata) filter (where m.role = 'user'))[1],
        (array_agg(m.metadata) filter (where m.role = 'assistant'))[1]
    ) as metadata,
    min(m.created_at) as created_at
from memory.messages as m
where m.expires_at is null or m.expires_at > now()
group by m.conversation_id, m.user_id, m.tenant_id, m.turn_number;
comment on view memory.turns is 'Turns (seeds 000, 001): live messages paired by turn number.';
grant select on memory.turns to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
