-- The audit trail: every change to a memory, with old and new content, actor and time.
create table memory.memory_events (
    id bigint generated always as identity primary key,
    memory_id uuid not null,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    event text not null check (event in (
        'add', 'update', 'supersede', 'reinstate', 'delete', 'restore', 'archive', 'unarchive', 'pin', 'unpin',
        'reference', 'purge'
    )),
    old_content text,
    new_content text,
    details jsonb not null default '{}',
    actor_id uuid,
    actor_role text not null,
    created_at timestamptz not null default now()
);

comment on table memory.memory_events is 'Append-only history of every memory change; only erasing the user removes it.';

create index memory_events_memory_id_idx on memory.memory_events (memory_id, id);

create index memory_events_user_id_idx on memory.memory_events (user_id);

create index memory_events_tenant_id_idx on memory.memory_events (tenant_id);

alter table memory.memory_events enable row level security;

create policy "Users and their tenant admins read memory history" on memory.memory_events
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));

grant select on memory.memory_events to authenticated;
grant select on memory.memory_events to service_role;

-- Why: history written by the application can be skipped or forged; written by trigger in the
-- same transaction, it cannot. One change may be several events (e.g. unpin and delete).
create function memory_private.record_memory_event()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_events text [] := '{}';
    v_event text;
begin
    if tg_op = 'INSERT' then
        v_events := array['add'];
    else
        if new.superseded_by is not null and old.superseded_by is null then
            v_events := v_events || 'supersede'::text;
        -- An old version standing again (an undone update); a purged successor leaves it inactive.
        elsif new.superseded_by is null and old.superseded_by is not null and new.active then
            v_events := v_events || 'reinstate'::text;
        elsif new.deleted_at is not null and old.deleted_at is null then
            v_events := v_events || 'delete'::text;
        elsif new.deleted_at is null and old.deleted_at is not null then
            v_events := v_events || 'restore'::text;
        end if;
        -- A reinforced memory may gain confidence; that is part of its 'reference' event.
        if new.content <> old.content or new.type <> old.type or new.category is distinct from old.category
            or new.context <> old.context
            or (new.confidence <> old.confidence and new.reference_count = old.reference_count) then
            v_events := v_events || 'update'::text;
        end if;
        if new.archived and not old.archived then
            v_events := v_events || 'archive'::text;
        elsif old.archived and not new.archived then
            v_events := v_events || 'unarchive'::text;
        end if;
        if new.pinned and not old.pinned then
            v_events := v_events || 'pin'::text;
        elsif old.pinned and not new.pinned then
            v_events := v_events || 'unpin'::text;
        end if;
        if new.reference_count > old.reference_count then
            v_events := v_events || 'reference'::text;
        end if;
    end if;
    foreach v_event in array v_events loop
        insert into memory.memory_events (
            memory_id, user_id, tenant_id, event, old_content, new_content, details, actor_id, actor_role
        ) values (
            new.id, new.user_id, new.tenant_id, v_event,
            case when tg_op = 'UPDATE' then old.content end, new.content,
            case v_event
                when 'supersede' then jsonb_build_object('superseded_by', new.superseded_by)
                when 'reference' then jsonb_build_object(
                    'reference_count', new.reference_count, 'confidence', new.confidence
                )
                else '{}'::jsonb
            end,
            (select auth.uid()),
            -- current_user is this function's owner here; the `role` setting is the caller's role.
            coalesce(nullif(current_setting('role'), 'none'), session_user)
        );
    end loop;
    return null;
end
$$;

create trigger memories_record_event
after insert or update on memory.memories
for each row execute function memory_private.record_memory_event();

revoke all on function memory_private.record_memory_event() from public, anon, authenticated, service_role;

-- Why: history is append-only. No role is granted update or delete on it; this guard also stops
-- the table owner, except for the cascade that erasing a user performs.
create function memory_private.guard_memory_events()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'DELETE' and not exists (select 1 from memory.users as u where u.id = old.user_id) then
        return old;
    end if;
    raise exception using errcode = '42501', message = 'memory history is append-only';
end
$$;

create trigger memory_events_append_only
before update or delete on memory.memory_events
for each row execute function memory_private.guard_memory_events();

revoke all on function memory_private.guard_memory_events() from public, anon, authenticated, service_role;

-- Why: one statement-level trigger per delete, so the purge's batches of thousands append their
-- events in one insert; actor and role are the caller's, as for every other event.
create function memory_private.record_memory_purge()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    insert into memory.memory_events (
        memory_id, user_id, tenant_id, event, old_content, new_content, details, actor_id, actor_role
    )
    select o.id, o.user_id, o.tenant_id, 'purge', o.content, null,
        jsonb_build_object('deleted_at', o.deleted_at, 'profile_id', o.profile_id),
        (select auth.uid()),
        coalesce(nullif(current_setting('role'), 'none'), session_user)
    from purged as o
    where exists (select 1 from memory.users as u where u.id = o.user_id)
    order by o.id;
    return null;
end
$$;

create trigger memories_record_purge
after delete on memory.memories
referencing old table as purged
for each statement execute function memory_private.record_memory_purge();

revoke all on function memory_private.record_memory_purge() from public, anon, authenticated, service_role;
