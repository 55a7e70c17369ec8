-- Why: seed 001's short-term memory: state such as a pending clarification ("Which one?") that
-- lives minutes, not a conversation. It expires after 5 minutes of inactivity (the user's own read
-- slides the expiry), reads as absent once expired, and the retention sweep removes it.
create table memory.short_term_state (
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    key text not null check (key ~ '[^[:space:]]' and length(key) <= 200),
    value jsonb not null,
    expires_at timestamptz not null,
    updated_at timestamptz not null default now(),
    primary key (user_id, key),
    constraint short_term_state_value_size check (octet_length(value::text) <= 100000)
);

comment on table memory.short_term_state is 'Seed 001''s short-lived state, e.g. a pending clarification; gone after expires_at.';

create index short_term_state_tenant_id_idx on memory.short_term_state (tenant_id);

create index short_term_state_expires_at_idx on memory.short_term_state (expires_at);

create trigger short_term_state_inherit_tenant
before insert or update of user_id, tenant_id on memory.short_term_state
for each row execute function memory_private.inherit_tenant();

alter table memory.short_term_state enable row level security;

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

grant select, delete on memory.short_term_state to authenticated;
grant select, insert, update, delete on memory.short_term_state to service_role;
grant insert (user_id, key, value, expires_at), update (value, expires_at, updated_at) on memory.short_term_state
to authenticated;

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

revoke all on function memory_private.replace_expired_short_term() from public, anon, authenticated, service_role;

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
    if v_ttl <= interval '0' or v_ttl > interval '100 years' then
        raise exception using errcode = '22023', message = 'ttl must be positive and at most 100 years';
    end if;
    insert into memory.short_term_state (user_id, key, value, expires_at)
    values (memory_private.writing_user(p_user_id), p_key, p_value, now() + v_ttl)
    on conflict (user_id, key) do update
    set value = excluded.value, expires_at = excluded.expires_at, updated_at = now()
    returning * into v_row;
    return v_row;
end
$$;

revoke all on function memory.short_term_set(text, jsonb, interval, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.short_term_set(text, jsonb, interval, uuid) to authenticated, service_role;

create function memory.short_term_get(p_key text, p_user_id uuid default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_value jsonb;
begin
    update memory.short_term_state as s
    set expires_at = now() + (s.expires_at - s.updated_at), updated_at = now()
    where s.user_id = v_user and s.key = p_key and s.expires_at > now()
    returning s.value into v_value;
    if found then
        return v_value;
    end if;
    return (
        select s.value from memory.short_term_state as s
        where s.user_id = v_user and s.key = p_key and s.expires_at > now()
    );
end
$$;

revoke all on function memory.short_term_get(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.short_term_get(text, uuid) to authenticated, service_role;

-- Why: with p_value, the state goes only while it still holds that value: a chat that read a
-- clarification and answered it must not clear another one set meanwhile.
create function memory.short_term_delete(p_key text, p_user_id uuid default null, p_value jsonb default null)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    delete from memory.short_term_state as s
    where s.user_id = memory_private.acting_user(p_user_id) and s.key = p_key
        and (p_value is null or s.value = p_value);
    return found;
end
$$;

revoke all on function memory.short_term_delete(text, uuid, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.short_term_delete(text, uuid, jsonb) to authenticated, service_role;
