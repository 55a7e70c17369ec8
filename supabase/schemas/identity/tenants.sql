-- Tenants are the app's isolated customers (seed 003); a null tenant means the app's own users. A
-- tenant may set its own conversation TTL and window defaults. tenant_admins names the Auth users
-- who may read that tenant's users' data. Only service_role writes either table.
create table memory.tenants (
    id uuid primary key default gen_random_uuid(),
    name text not null check (name ~ '[^[:space:]]'),
    conversation_ttl interval check (conversation_ttl > interval '0'),
    conversation_window integer check (conversation_window > 0),
    created_at timestamptz not null default now()
);

create table memory.tenant_admins (
    tenant_id uuid not null references memory.tenants (id) on delete cascade,
    user_id uuid not null references auth.users (id) on delete cascade,
    created_at timestamptz not null default now(),
    primary key (tenant_id, user_id)
);

comment on table memory.tenants is 'Isolated customers of the app (seed 003). A null tenant means the app''s own users.';

comment on table memory.tenant_admins is 'Supabase Auth users who may read their tenant''s users'' data.';

create index tenant_admins_user_id_idx on memory.tenant_admins (user_id);

alter table memory.tenants enable row level security;

alter table memory.tenant_admins enable row level security;

create policy "Tenant admins read their tenants" on memory.tenants
for select to authenticated
using (id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Admins read their own admin grants" on memory.tenant_admins
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory.tenants to authenticated;
grant select, insert, update, delete on memory.tenants to service_role;
grant select on memory.tenant_admins to authenticated;
grant select, insert, update, delete on memory.tenant_admins to service_role;
