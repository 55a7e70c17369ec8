-- Seed 004's monthly summaries: one per profile and month (boundaries in the profile's time zone),
-- composed from its weekly summaries: emotional and cognitive summaries and key themes. Jobs write
-- them; users and their tenant admins read them, users may delete theirs.
create table memory.monthly_summaries (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid not null,
    year smallint not null,
    month smallint not null check (month between 1 and 12),
    emotional_summary text not null check (emotional_summary ~ '[^[:space:]]'),
    cognitive_summary text,
    key_themes text[] not null default '{}',
    context jsonb not null default '{}' check (jsonb_typeof(context) = 'object'),
    conversation_count integer not null default 0 check (conversation_count >= 0),
    weekly_summaries_used integer not null default 0 check (weekly_summaries_used >= 0),
    created_at timestamptz not null default now(),
    unique (user_id, profile_id, year, month),
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade
);

comment on table memory.monthly_summaries is 'A month of a profile, composed from its weekly summaries.';

create index monthly_summaries_tenant_id_idx on memory.monthly_summaries (tenant_id);

create index monthly_summaries_profile_id_idx on memory.monthly_summaries (profile_id, year, month);

create trigger monthly_summaries_inherit_tenant
before insert or update of user_id, tenant_id on memory.monthly_summaries
for each row execute function memory_private.inherit_tenant();

alter table memory.monthly_summaries enable row level security;

create policy "Users and their tenant admins read monthly summaries" on memory.monthly_summaries
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users delete their monthly summaries" on memory.monthly_summaries
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.monthly_summaries to authenticated;
grant select, insert, update, delete on memory.monthly_summaries to service_role;
