-- Identity and tenancy: tenants, their admins, the people whose memory it is, and their profiles.
--
-- A Supabase Auth user is a `memory.users` row with `id = auth.users.id`, so every policy is the
-- plain `user_id = (select auth.uid())`. Apps that identify people by their own text ids (a chat
-- id, "user123") map them to a user per tenant through `memory.user_id_for`.

create table memory.tenants (
    id uuid primary key default gen_random_uuid(),
    name text not null check (name ~ '[^[:space:]]'),
    conversation_ttl interval check (conversation_ttl > interval '0'),
    conversation_window integer check (conversation_window > 0),
    created_at timestamptz not null default now()
);
comment on table memory.tenants is 'Isolated customers of the app (seed 003). A null tenant means the app''s own users.';

create table memory.tenant_admins (
    tenant_id uuid not null references memory.tenants (id) on delete cascade,
    user_id uuid not null references auth.users (id) on delete cascade,
    created_at timestamptz not null default now(),
    primary key (tenant_id, user_id)
);
create index tenant_admins_user_id_idx on memory.tenant_admins (user_id);
comment on table memory.tenant_admins is 'Supabase Auth users who may read their tenant''s users'' data.';

create table memory.users (
    id uuid primary key default gen_random_uuid(),
    tenant_id uuid references memory.tenants (id) on delete cascade,
    auth_user_id uuid unique references auth.users (id) on delete cascade,
    external_id text check (external_id ~ '[^[:space:]]'),
    memory_paused boolean not null default false,
    long_term_opt_in boolean not null default false,
    created_at timestamptz not null default now(),
    constraint users_auth_user_is_id check (auth_user_id is null or auth_user_id = id),
    constraint users_identified check (auth_user_id is not null or external_id is not null)
);
-- One user per external id and tenant; the null tenant is one namespace too (nulls not distinct).
create unique index users_tenant_external_id_key on memory.users (tenant_id, external_id) nulls not distinct
where external_id is not null;
create index users_tenant_id_idx on memory.users (tenant_id);
comment on table memory.users is 'The person whose memory it is: a Supabase Auth user or an external id in a tenant.';
comment on column memory.users.memory_paused is 'The user paused long-term memory: nothing new is remembered.';
comment on column memory.users.long_term_opt_in is 'The user opted in to long-term storage: no automatic archival.';

create table memory.profiles (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    name text not null default 'Main profile' check (name ~ '[^[:space:]]'),
    is_primary boolean not null default false,
    timezone text not null default 'UTC' check (memory_private.is_time_zone(timezone)),
    attributes jsonb not null default '{}' check (jsonb_typeof(attributes) = 'object'),
    created_at timestamptz not null default now(),
    unique (id, user_id)
);
-- Seed 004: at most one primary profile per user.
create unique index profiles_one_primary_per_user on memory.profiles (user_id) where is_primary;
create index profiles_user_id_idx on memory.profiles (user_id);
create index profiles_tenant_id_idx on memory.profiles (tenant_id);
comment on table memory.profiles is 'A user''s profiles (seed 004); memories are only made from the primary one.';

-- Why: tenant admin policies filter on `tenant_id`, which must always equal the owner's tenant.
-- Clients never choose it; this trigger copies it from the user on every insert and owner change.
create function memory_private.inherit_tenant()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    return new;
end
$$;

create trigger profiles_inherit_tenant
before insert or update of user_id, tenant_id on memory.profiles
for each row execute function memory_private.inherit_tenant();

-- Why: policies need "which tenants does the caller administer" once per statement, without
-- granting callers read access to the admin table of other tenants.
create function memory_private.administered_tenants()
returns uuid[]
language sql
stable
security definer
set search_path = ''
as $$
    select coalesce(array_agg(a.tenant_id), '{}')
    from memory.tenant_admins as a
    where a.user_id = (select auth.uid())
$$;
grant execute on function memory_private.administered_tenants() to authenticated, service_role;

alter table memory.tenants enable row level security;
alter table memory.tenant_admins enable row level security;
alter table memory.users enable row level security;
alter table memory.profiles enable row level security;

create policy "Tenant admins read their tenants" on memory.tenants
for select to authenticated
using (id = any((select memory_private.administered_tenants())::uuid[]));

create policy "Admins read their own admin grants" on memory.tenant_admins
for select to authenticated
using (user_id = (select auth.uid()));

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

grant select on memory.tenants, memory.tenant_admins to authenticated;
grant select on memory.users to authenticated;
grant insert (id, auth_user_id) on memory.users to authenticated;
grant update (memory_paused, long_term_opt_in) on memory.users to authenticated;
grant select, delete on memory.profiles to authenticated;
grant insert (id, user_id, name, is_primary, timezone, attributes) on memory.profiles to authenticated;
grant update (name, is_primary, timezone, attributes) on memory.profiles to authenticated;
grant select, insert, update, delete on memory.tenants, memory.tenant_admins, memory.users, memory.profiles
to service_role;

-- Why: seed 000 and 003 identify people by text ids scoped to a tenant; one function owns that
-- mapping so the same id always means the same person, even under concurrent first requests.
create function memory.user_id_for(p_external_id text, p_tenant_id uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid;
begin
    if p_external_id is null or p_external_id !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'external user id must not be empty';
    end if;
    insert into memory.users (tenant_id, external_id)
    values (p_tenant_id, p_external_id)
    on conflict (tenant_id, external_id) where external_id is not null do nothing
    returning id into v_id;
    if v_id is null then
        select u.id into v_id
        from memory.users as u
        where u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id;
    end if;
    return v_id;
end
$$;
grant execute on function memory.user_id_for(text, uuid) to service_role;

-- Why: a Supabase Auth user needs its `memory.users` row before its first conversation. Signed-in
-- users register only themselves and never pick a tenant; service_role may place them in one.
create function memory.register_user(p_user_id uuid default null, p_tenant_id uuid default null)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid := memory_private.acting_user(p_user_id);
begin
    if p_tenant_id is null then
        insert into memory.users (id, auth_user_id) values (v_id, v_id) on conflict (id) do nothing;
    else
        insert into memory.users (id, auth_user_id, tenant_id)
        values (v_id, v_id, p_tenant_id)
        on conflict (id) do nothing;
    end if;
    return v_id;
end
$$;
grant execute on function memory.register_user(uuid, uuid) to authenticated, service_role;

-- Why: the primary profile must move in one step; the partial unique index would reject a second
-- primary, so the old one is cleared first inside the same transaction.
create function memory.set_primary_profile(p_profile_id uuid)
returns memory.profiles
language plpgsql
set search_path = ''
as $$
declare
    v_profile memory.profiles;
begin
    select p.* into v_profile from memory.profiles as p where p.id = p_profile_id for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    update memory.profiles as p set is_primary = false
    where p.user_id = v_profile.user_id and p.is_primary and p.id <> p_profile_id;
    update memory.profiles as p set is_primary = true where p.id = p_profile_id
    returning p.* into v_profile;
    return v_profile;
end
$$;
grant execute on function memory.set_primary_profile(uuid) to authenticated, service_role;

-- Why: a signed-in user's first write (a conversation, a value) must not fail for want of a
-- `memory.users` row; every writing RPC resolves its user through here.
create function memory_private.writing_user(p_user_id uuid)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    if (select auth.uid()) = v_user then
        perform memory.register_user(v_user);
    end if;
    return v_user;
end
$$;
grant execute on function memory_private.writing_user(uuid) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
