-- The person whose memory it is: a Supabase Auth user (id = auth.users.id, so every policy is a
-- plain `user_id = auth.uid()`) or an app's own text id, unique per tenant. Holds the user's memory
-- switches (pause, long-term opt-in); signed-in users register only themselves, outside tenants.
create table memory.users (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid references memory.tenants (id) on delete cascade,
    auth_user_id uuid unique references auth.users (id) on delete cascade,
    external_id text check (external_id ~ '[^[:space:]]'),
    memory_paused boolean not null default false,
    long_term_opt_in boolean not null default false,
    created_at timestamptz not null default now(),
    -- The number the user's latest memory took (memory.memories.number): numbers are never reused.
    memories_numbered integer not null default 0 check (memories_numbered >= 0),
    constraint users_auth_user_is_id check (auth_user_id is null or auth_user_id = id),
    constraint users_identified check (auth_user_id is not null or external_id is not null)
);

comment on table memory.users is 'The person whose memory it is: a Supabase Auth user or an external id in a tenant.';

comment on column memory.users.memory_paused is 'The user paused long-term memory: nothing new is remembered.';

comment on column memory.users.long_term_opt_in is 'The user opted in to long-term storage: no automatic archival.';

-- One user per external id and tenant; the null tenant is one namespace too (nulls not distinct).
create unique index users_tenant_external_id_key on memory.users (tenant_id, external_id) nulls not distinct
where external_id is not null;

create index users_tenant_id_idx on memory.users (tenant_id);

alter table memory.users enable row level security;

create policy "Users and their tenant admins read user rows" on memory.users
for select to authenticated
using (id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Users register themselves" on memory.users
for insert to authenticated
with check (id = (select auth.uid()) and auth_user_id = (select auth.uid()) and tenant_id is null);

create policy "Users update their own settings" on memory.users
for update to authenticated
using (id = (select auth.uid()))
with check (id = (select auth.uid()));

grant select on memory.users to authenticated;
grant select, insert, update, delete on memory.users to service_role;
grant insert (id, auth_user_id), update (memory_paused, long_term_opt_in) on memory.users to authenticated;
