-- The extraction ledger: one row per source message makes a retried extraction a no-op.
create table memory.memory_extractions (
    source_message_id bigint primary key references memory.messages (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    memory_ids uuid[] not null default '{}',
    created_at timestamptz not null default now()
);

comment on table memory.memory_extractions is 'Which source messages were already extracted, and what they gave.';

create index memory_extractions_user_recent_idx on memory.memory_extractions (user_id, created_at desc);

create index memory_extractions_tenant_id_idx on memory.memory_extractions (tenant_id);

create trigger memory_extractions_inherit_tenant
before insert or update of user_id, tenant_id on memory.memory_extractions
for each row execute function memory_private.inherit_tenant();

alter table memory.memory_extractions enable row level security;

create policy "Users and their tenant admins read extractions" on memory.memory_extractions
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

grant select on memory.memory_extractions to authenticated;
grant select, insert, update, delete on memory.memory_extractions to service_role;
