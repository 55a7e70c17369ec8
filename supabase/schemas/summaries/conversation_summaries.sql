-- Seed 004's turn summaries: every summary_interval turns, 100-200 tokens of those turns, for the
-- conversation's own context. profile_id is set only when the conversation passes the memory gate,
-- and only those summaries feed the weekly ones. Jobs write them; users read and may delete theirs.
create table memory.conversation_summaries (
    id uuid primary key default gen_random_uuid(),
    conversation_id uuid not null references memory.conversations (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid references memory.profiles (id) on delete set null,
    from_turn integer not null check (from_turn > 0),
    to_turn integer not null check (to_turn >= from_turn),
    summary text not null check (summary ~ '[^[:space:]]' and length(summary) <= 4000),
    created_at timestamptz not null default now(),
    unique (conversation_id, to_turn)
);

comment on table memory.conversation_summaries is 'Every N turns: a 100-200 token summary of those turns.';

create index conversation_summaries_user_id_idx on memory.conversation_summaries (user_id);

create index conversation_summaries_tenant_id_idx on memory.conversation_summaries (tenant_id);

create index conversation_summaries_profile_recent_idx on memory.conversation_summaries (profile_id, created_at);

create index conversation_summaries_created_at_idx on memory.conversation_summaries (created_at);

create trigger conversation_summaries_inherit_tenant
before insert or update of user_id, tenant_id on memory.conversation_summaries
for each row execute function memory_private.inherit_tenant();

alter table memory.conversation_summaries enable row level security;

-- Summaries are written by the jobs (service_role); users read theirs and may delete them.
create policy "Users and their tenant admins read conversation summaries" on memory.conversation_summaries
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users delete their conversation summaries" on memory.conversation_summaries
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.conversation_summaries to authenticated;
grant select, insert, update, delete on memory.conversation_summaries to service_role;
