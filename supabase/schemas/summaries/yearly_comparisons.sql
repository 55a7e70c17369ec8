-- Seed 004's year-over-year comparisons: a month of a profile compared with the same month a year
-- earlier, composed from stored monthly summaries and kept, so a viewed month is compared once.
-- Jobs write them; users and their tenant admins read them, users may delete theirs.
create table memory.yearly_comparisons (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid not null,
    year smallint not null,
    month smallint not null check (month between 1 and 12),
    comparison text not null check (comparison ~ '[^[:space:]]'),
    created_at timestamptz not null default now(),
    unique (user_id, profile_id, year, month),
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade
);

comment on table memory.yearly_comparisons is 'A month compared with the same month a year earlier.';

create index yearly_comparisons_tenant_id_idx on memory.yearly_comparisons (tenant_id);

create index yearly_comparisons_profile_id_idx on memory.yearly_comparisons (profile_id);

create trigger yearly_comparisons_inherit_tenant
before insert or update of user_id, tenant_id on memory.yearly_comparisons
for each row execute function memory_private.inherit_tenant();

alter table memory.yearly_comparisons enable row level security;

create policy "Users and their tenant admins read yearly comparisons" on memory.yearly_comparisons
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users delete their yearly comparisons" on memory.yearly_comparisons
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.yearly_comparisons to authenticated;
grant select, insert, update, delete on memory.yearly_comparisons to service_role;
