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

revoke all on function memory_private.touch_updated_at() from public, anon, authenticated, service_role;
