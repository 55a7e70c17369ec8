-- Short-term and key-value state (seeds 001 and 003), independent of each other and of
-- long-term memory: a key-value store (jsonb, atomic upsert), a user mode, and short-lived state
-- with an expiry (seed 001's 5-minute clarification state).

create table memory.user_kv (
    id bigint generated always as identity primary key,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    key text not null check (key ~ '[^[:space:]]' and length(key) <= 200),
    value jsonb not null check (jsonb_typeof(value) = 'object'),
    updated_at timestamptz not null default now(),
    unique (user_id, key)
);
create index user_kv_tenant_id_idx on memory.user_kv (tenant_id);
comment on table memory.user_kv is 'Seed 003''s user memory: free-form JSON objects by key, per user.';

create table memory.user_state (
    user_id uuid primary key references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    mode text not null check (mode ~ '[^[:space:]]' and length(mode) <= 100),
    updated_at timestamptz not null default now()
);
create index user_state_tenant_id_idx on memory.user_state (tenant_id);
comment on table memory.user_state is 'Seed 003''s user state: one mode per user (active, halted, ...).';

create table memory.short_term_state (
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    key text not null check (key ~ '[^[:space:]]' and length(key) <= 200),
    value jsonb not null,
    expires_at timestamptz not null,
    updated_at timestamptz not null default now(),
    primary key (user_id, key)
);
create index short_term_state_tenant_id_idx on memory.short_term_state (tenant_id);
create index short_term_state_expires_at_idx on memory.short_term_state (expires_at);
comment on table memory.short_term_state is 'Seed 001''s short-lived state, e.g. a pending clarification; gone after expires_at.';

create trigger user_kv_inherit_tenant
before insert or update of user_id, tenant_id on memory.user_kv
for each row execute function memory_private.inherit_tenant();
create trigger user_state_inherit_tenant
before insert or update of user_id, tenant_id on memory.user_state
for each row execute function memory_private.inherit_tenant();
create trigger short_term_state_inherit_tenant
before insert or update of user_id, tenant_id on memory.short_term_state
for each row execute function memory_private.inherit_tenant();

-- Why: an expired value is invisible (the select policy hides it), and an upsert's conflict check
-- must see the row it updates; so a write first clears the expired row it would collide with.
create function memory_private.replace_expired_short_term()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    delete from memory.short_term_state as s
    where s.user_id = new.user_id and s.key = new.key and s.expires_at <= now();
    return new;
end
$$;

create trigger short_term_state_replace_expired
before insert on memory.short_term_state
for each row execute function memory_private.replace_expired_short_term();

alter table memory.user_kv enable row level security;
alter table memory.user_state enable row level security;
alter table memory.short_term_state enable row level security;

create policy "Users read their values and tenant admins read their tenant's" on memory.user_kv
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
create policy "Users write their own values" on memory.user_kv
for insert to authenticated
with check (user_id = (select auth.uid()));
create policy "Users update their own values" on memory.user_kv
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));
create policy "Users delete their own values" on memory.user_kv
for delete to authenticated
using (user_id = (select auth.uid()));

create policy "Users read their state and tenant admins read their tenant's" on memory.user_state
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
create policy "Users set their own state" on memory.user_state
for insert to authenticated
with check (user_id = (select auth.uid()));
create policy "Users update their own state" on memory.user_state
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));
create policy "Users delete their own state" on memory.user_state
for delete to authenticated
using (user_id = (select auth.uid()));

create policy "Users and their tenant admins read live short-term state" on memory.short_term_state
for select to authenticated
using (
    expires_at > now()
    and (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]))
);
create policy "Users write their own short-term state" on memory.short_term_state
for insert to authenticated
with check (user_id = (select auth.uid()));
create policy "Users update their own short-term state" on memory.short_term_state
for update to authenticated
using (user_id = (select auth.uid()))
with check (user_id = (select auth.uid()));
create policy "Users delete their own short-term state" on memory.short_term_state
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.user_kv, memory.user_state, memory.short_term_state to authenticated;
grant insert (user_id, key, value), update (value, updated_at) on memory.user_kv to authenticated;
grant insert (user_id, mode), update (mode, updated_at) on memory.user_state to authenticated;
grant insert (user_id, key, value, expires_at), update (value, expires_at, updated_at)
on memory.short_term_state to authenticated;
grant select, insert, update, delete on memory.user_kv, memory.user_state, memory.short_term_state to service_role;

-- Why: seed 003's set_memory is an atomic upsert: concurrent writers never see a duplicate key.
create function memory.kv_set(p_key text, p_value jsonb, p_user_id uuid default null)
returns memory.user_kv
language sql
set search_path = ''
as $$
    insert into memory.user_kv (user_id, key, value)
    values (memory_private.writing_user(p_user_id), p_key, p_value)
    on conflict (user_id, key) do update set value = excluded.value, updated_at = now()
    returning *
$$;
grant execute on function memory.kv_set(text, jsonb, uuid) to authenticated, service_role;

-- Readers resolve the user first, so a call without one fails even when no row would match.
create function memory.kv_get(p_key text, p_user_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    return (select v.value from memory.user_kv as v where v.user_id = v_user and v.key = p_key);
end
$$;
grant execute on function memory.kv_get(text, uuid) to authenticated, service_role;

create function memory.kv_list(p_user_id uuid default null)
returns setof memory.user_kv
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    return query select v.* from memory.user_kv as v where v.user_id = v_user order by v.key;
end
$$;
grant execute on function memory.kv_list(uuid) to authenticated, service_role;

-- Why: seed 003 reports deleting a missing key as not found rather than succeeding silently.
create function memory.kv_delete(p_key text, p_user_id uuid default null)
returns void
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.user_kv as v where v.user_id = memory_private.acting_user(p_user_id) and v.key = p_key;
    if not found then
        raise exception using errcode = 'P0002', message = format('memory key %L not found', p_key);
    end if;
end
$$;
grant execute on function memory.kv_delete(text, uuid) to authenticated, service_role;

create function memory.kv_clear(p_user_id uuid default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_deleted integer;
begin
    delete from memory.user_kv as v where v.user_id = memory_private.acting_user(p_user_id);
    get diagnostics v_deleted = row_count;
    return v_deleted;
end
$$;
grant execute on function memory.kv_clear(uuid) to authenticated, service_role;

create function memory.state_set(p_mode text, p_user_id uuid default null)
returns memory.user_state
language sql
set search_path = ''
as $$
    insert into memory.user_state (user_id, mode)
    values (memory_private.writing_user(p_user_id), p_mode)
    on conflict (user_id) do update set mode = excluded.mode, updated_at = now()
    returning *
$$;
grant execute on function memory.state_set(text, uuid) to authenticated, service_role;

create function memory.state_get(p_user_id uuid default null)
returns setof memory.user_state
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    return query select s.* from memory.user_state as s where s.user_id = v_user;
end
$$;
grant execute on function memory.state_get(uuid) to authenticated, service_role;

create function memory.state_delete(p_user_id uuid default null)
returns void
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.user_state as s where s.user_id = memory_private.acting_user(p_user_id);
    if not found then
        raise exception using errcode = 'P0002', message = 'user state not found';
    end if;
end
$$;
grant execute on function memory.state_delete(uuid) to authenticated, service_role;

-- Why: seed 001's clarification state lives minutes, not a conversation; expired state reads as
-- absent at once, and the retention sweep removes it.
create function memory.short_term_set(
    p_key text, p_value jsonb, p_ttl interval default null, p_user_id uuid default null
)
returns memory.short_term_state
language plpgsql
set search_path = ''
as $$
declare
    v_ttl interval := coalesce(p_ttl, (memory_private.setting('short_term_ttl') #>> '{}')::interval);
    v_row memory.short_term_state;
begin
    if v_ttl <= interval '0' then
        raise exception using errcode = '22023', message = 'ttl must be positive';
    end if;
    insert into memory.short_term_state (user_id, key, value, expires_at)
    values (memory_private.writing_user(p_user_id), p_key, p_value, now() + v_ttl)
    on conflict (user_id, key) do update
    set value = excluded.value, expires_at = excluded.expires_at, updated_at = now()
    returning * into v_row;
    return v_row;
end
$$;
grant execute on function memory.short_term_set(text, jsonb, interval, uuid) to authenticated, service_role;

create function memory.short_term_get(p_key text, p_user_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    return (
        select s.value from memory.short_term_state as s
        where s.user_id = v_user and s.key = p_key and s.expires_at > now()
    );
end
$$;
grant execute on function memory.short_term_get(text, uuid) to authenticated, service_role;

create function memory.short_term_delete(p_key text, p_user_id uuid default null)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.short_term_state as s
    where s.user_id = memory_private.acting_user(p_user_id) and s.key = p_key;
    return found;
end
$$;
grant execute on function memory.short_term_delete(text, uuid) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
