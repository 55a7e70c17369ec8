-- Why: every change (pin, delete, supersede, reference ...) moves updated_at, unless the writer
-- set it explicitly (an import restoring a record as it was).
create function memory_private.touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if new.updated_at is not distinct from old.updated_at then
        new.updated_at := now();
    end if;
    return new;
end
$$;

create trigger memories_touch_updated_at
before update on memory.memories
for each row execute function memory_private.touch_updated_at();

-- Why: seed 002's conversations move updated_at on every change too (a rename, archiving, their
-- profile, mode or metadata), not only with a new turn. A turn's own update sets it and names none
-- of these columns, so the write path fires no trigger.
create trigger conversations_touch_updated_at
before update of title, archived, remember, profile_id, mode, metadata on memory.conversations
for each row when (
    (old.title, old.archived, old.remember, old.profile_id, old.mode, old.metadata)
    is distinct from (new.title, new.archived, new.remember, new.profile_id, new.mode, new.metadata)
)
execute function memory_private.touch_updated_at();

revoke all on function memory_private.touch_updated_at() from public, anon, authenticated, service_role;
