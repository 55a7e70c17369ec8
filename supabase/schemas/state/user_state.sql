-- Seed 003's user state: one mode string per user (active, halted, ...), set by an atomic upsert.
-- Users write their own, tenant admins read their tenant's; deleting a missing state is reported
-- (P0002) rather than succeeding silently.
create table memory.user_state (
    user_id uuid primary key references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    mode text not null check (mode ~ '[^[:space:]]' and length(mode) <= 100),
    updated_at timestamptz not null default now()
);

comment on table memory.user_state is 'Seed 003''s user state: one mode per user (active, halted, ...).';

create index user_state_tenant_id_idx on memory.user_state (tenant_id);

create trigger user_state_inherit_tenant
before insert or update of user_id, tenant_id on memory.user_state
for each row execute function memory_private.inherit_tenant();

alter table memory.user_state enable row level security;

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

grant select, delete on memory.user_state to authenticated;
grant select, insert, update, delete on memory.user_state to service_role;
grant insert (user_id, mode), update (mode, updated_at) on memory.user_state to authenticated;

create function memory.state_set(p_mode text, p_user_id uuid default null)
returns memory.user_state
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.user_state;
begin
    insert into memory.user_state as s (user_id, mode)
    values (memory_private.writing_user(p_user_id), p_mode)
    on conflict (user_id) do update set mode = excluded.mode, updated_at = now()
    returning s.* into v_row;
    return v_row;
end
$$;

revoke all on function memory.state_set(text, uuid) from public, anon, authenticated, service_role;
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

revoke all on function memory.state_get(uuid) from public, anon, authenticated, service_role;
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

revoke all on function memory.state_delete(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.state_delete(uuid) to authenticated, service_role;
