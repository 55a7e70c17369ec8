-- A memory that leaves the table for good appends a 'purge' event to its history.
--
-- Why: the history trigger of 20261122000700 fires after insert and update, so a memory that was
-- deleted outright left no trace of going. Since 20261123001000 no API role deletes memories, but
-- rows still leave the table: the retention purge (30 days after a soft delete), a profile deleted
-- by its user (its memories cascade with it, soft-deleted or not) and the table owner's repairs.
-- Each now records a 'purge' event with the last content and whether the memory had been
-- soft-deleted first, so "every change appends to memory_events" holds for deletes as well.
-- Erasing a user is the exception by design: their history goes with them, so nothing is recorded
-- for a user who no longer exists (which is also what keeps the erasure's cascade working).
alter table memory.memory_events drop constraint memory_events_event_check;
alter table memory.memory_events add constraint memory_events_event_check check (event in (
    'add', 'update', 'supersede', 'delete', 'restore', 'archive', 'unarchive', 'pin', 'unpin', 'reference', 'purge'
));

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

revoke execute on all routines in schema memory, memory_private from public;
