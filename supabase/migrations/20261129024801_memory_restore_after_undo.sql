-- An undone update's reinstated version is recorded ('reinstate'), so forgotten and restored it comes
-- back active: only a version superseded since it last stood current comes back inactive.
alter table memory.memory_events drop constraint "memory_events_event_check";

alter table memory.memory_events add constraint memory_events_event_check check (
    (
        event
        = any(
            array[
                'add'::text,
                'update'::text,
                'supersede'::text,
                'reinstate'::text,
                'delete'::text,
                'restore'::text,
                'archive'::text,
                'unarchive'::text,
                'pin'::text,
                'unpin'::text,
                'reference'::text,
                'purge'::text
            ]
        )
    )
) not valid;

alter table memory.memory_events validate constraint "memory_events_event_check";

set check_function_bodies = off;

create or replace function memory_private.record_memory_event()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
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
$function$;

create or replace function memory_private.restore_memory(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m
    set deleted_at = null,
        active = m.superseded_by is null and not exists (
            select 1 from memory.memory_events as e
            where e.memory_id = m.id and e.event = 'supersede' and e.id > coalesce((
                select max(r.id) from memory.memory_events as r where r.memory_id = m.id and r.event = 'reinstate'
            ), 0)
        )
    where m.id = p_memory_id and m.deleted_at is not null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'no deleted memory with that id';
    end if;
    perform memory_private.enforce_memory_cap(v_row.user_id, v_row.profile_id);
    select m.* into v_row from memory.memories as m where m.id = p_memory_id;
    return v_row;
end
$function$;


revoke all on function memory_private.record_memory_event() from public, anon, authenticated, service_role;
revoke all on function memory_private.restore_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.restore_memory(uuid, uuid) to authenticated, service_role;
