-- Seed 003's user memory: free-form JSON objects by key, per user, independent of long-term
-- memories. kv_set is an atomic upsert, so concurrent writers never collide on a key; users write
-- their own values, tenant admins read their tenant's.
create table memory.user_kv (
    id bigint generated always as identity primary key,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    key text not null check (key ~ '[^[:space:]]' and length(key) <= 200),
    value jsonb not null check (jsonb_typeof(value) = 'object'),
    updated_at timestamptz not null default now(),
    unique (user_id, key),
    constraint user_kv_value_size check (octet_length(value::text) <= 100000)
);

comment on table memory.user_kv is 'Seed 003''s user memory: free-form JSON objects by key, per user.';

create index user_kv_tenant_id_idx on memory.user_kv (tenant_id);

create trigger user_kv_inherit_tenant
before insert or update of user_id, tenant_id on memory.user_kv
for each row execute function memory_private.inherit_tenant();

alter table memory.user_kv enable row level security;

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

grant select, delete on memory.user_kv to authenticated;
grant select, insert, update, delete on memory.user_kv to service_role;
grant insert (user_id, key, value), update (value, updated_at) on memory.user_kv to authenticated;

-- Why: seed 003's set_memory is an atomic upsert: concurrent writers never see a duplicate key.
create function memory.kv_set(p_key text, p_value jsonb, p_user_id uuid default null)
returns memory.user_kv
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.user_kv;
begin
    insert into memory.user_kv as k (user_id, key, value)
    values (memory_private.writing_user(p_user_id), p_key, p_value)
    on conflict (user_id, key) do update set value = excluded.value, updated_at = now()
    returning k.* into v_row;
    return v_row;
end
$$;

revoke all on function memory.kv_set(text, jsonb, uuid) from public, anon, authenticated, service_role;
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

revoke all on function memory.kv_get(text, uuid) from public, anon, authenticated, service_role;
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

revoke all on function memory.kv_list(uuid) from public, anon, authenticated, service_role;
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

revoke all on function memory.kv_delete(text, uuid) from public, anon, authenticated, service_role;
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

revoke all on function memory.kv_clear(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.kv_clear(uuid) to authenticated, service_role;
