-- Seed 004's weekly summaries: one per profile and ISO week in the profile's time zone, composed
-- from that week's gated conversation summaries (emotional patterns, themes). Jobs write them;
-- users and their tenant admins read them, users may delete theirs.
create table memory.weekly_summaries (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid not null,
    iso_year smallint not null,
    week_number smallint not null check (week_number between 1 and 53),
    week_start_date date not null,
    week_end_date date not null check (week_end_date = week_start_date + 6),
    emotional_summary text not null check (emotional_summary ~ '[^[:space:]]'),
    key_themes text[] not null default '{}',
    dominant_patterns text[] not null default '{}',
    conversation_count integer not null default 0 check (conversation_count >= 0),
    created_at timestamptz not null default now(),
    unique (user_id, profile_id, iso_year, week_number),
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade
);

comment on table memory.weekly_summaries is 'A week of a profile''s conversations, in the profile''s time zone.';

create index weekly_summaries_tenant_id_idx on memory.weekly_summaries (tenant_id);

create index weekly_summaries_profile_id_idx on memory.weekly_summaries (profile_id, week_start_date);

create trigger weekly_summaries_inherit_tenant
before insert or update of user_id, tenant_id on memory.weekly_summaries
for each row execute function memory_private.inherit_tenant();

alter table memory.weekly_summaries enable row level security;

create policy "Users and their tenant admins read weekly summaries" on memory.weekly_summaries
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users delete their weekly summaries" on memory.weekly_summaries
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.weekly_summaries to authenticated;
grant select, insert, update, delete on memory.weekly_summaries to service_role;
