-- Together mode (seed 004): people who share a conversation's messages, never its memories. Each
-- participant picks their own profile, so what they say feeds their memory, not the owner's.
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

comment on table memory.participants is 'Together mode: people who share a conversation''s messages, never its memories.';

create index participants_user_id_idx on memory.participants (user_id);

create index participants_tenant_id_idx on memory.participants (tenant_id);

create index participants_profile_id_user_id_idx on memory.participants (profile_id, user_id);

create trigger participants_inherit_tenant
before insert or update of user_id, tenant_id on memory.participants
for each row execute function memory_private.inherit_tenant();

alter table memory.participants enable row level security;

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

create policy "Owners add participants" on memory.participants
for insert to authenticated
with check (
    (profile_id is null or user_id = (select auth.uid()))
    and exists (
        select 1 from memory.conversations as c
        where c.id = conversation_id and c.user_id = (select auth.uid())
    )
);

grant insert, delete on memory.participants to authenticated;
grant select, insert, update, delete on memory.participants to service_role;
grant select (conversation_id, user_id, tenant_id, joined_at), update (profile_id) on memory.participants
to authenticated;

-- Why: the profile the caller chose for a conversation they take part in, for their own prompt
-- (prompt_context). The column is not granted to signed-in users, so that no one reads another
-- participant's choice; this answers only about the caller, and null to anyone else.
create function memory_private.chosen_profile(p_conversation_id uuid)
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return (
        select p.profile_id from memory.participants as p
        where p.conversation_id = p_conversation_id and p.user_id = (select auth.uid())
    );
end
$$;

revoke all on function memory_private.chosen_profile(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.chosen_profile(uuid) to authenticated, service_role;
