-- A user's profiles (seed 004). Memories are made only from the primary one, so a user has at most
-- one primary (partial unique index); the time zone cuts weekly and monthly summaries. Users manage
-- their own; tenant_id is copied from the user so tenant admins can read them.
create table memory.profiles (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    name text not null default 'Main profile' check (name ~ '[^[:space:]]'),
    is_primary boolean not null default false,
    timezone text not null default 'UTC' check (memory_private.is_time_zone(timezone)),
    attributes jsonb not null default '{}' check (jsonb_typeof(attributes) = 'object'),
    created_at timestamptz not null default now(),
    unique (id, user_id),
    constraint profiles_name_length check (length(name) <= 200),
    constraint profiles_attributes_size check (octet_length(attributes::text) <= 100000)
);

comment on table memory.profiles is 'A user''s profiles (seed 004); memories are only made from the primary one.';

-- Seed 004: at most one primary profile per user.
create unique index profiles_one_primary_per_user on memory.profiles (user_id) where is_primary;

create index profiles_user_id_idx on memory.profiles (user_id);

create index profiles_tenant_id_idx on memory.profiles (tenant_id);

create trigger profiles_inherit_tenant
before insert or update of user_id, tenant_id on memory.profiles
for each row execute function memory_private.inherit_tenant();

alter table memory.profiles enable row level security;

create policy "Users read their profiles and tenant admins read their tenant's" on memory.profiles
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users create their own profiles" on memory.profiles
for insert to authenticated
with check (user_id = (select auth.uid()));

create policy "Users update their own profiles" on memory.profiles
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));

create policy "Users delete their own profiles" on memory.profiles
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.profiles to authenticated;
grant select, insert, update, delete on memory.profiles to service_role;
grant insert (id, user_id, name, is_primary, timezone, attributes) on memory.profiles to authenticated;
grant update (name, is_primary, timezone, attributes) on memory.profiles to authenticated;
