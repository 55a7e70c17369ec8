-- Why: seed 004's "This was saved" toast and live memory list must learn when a worker saves,
-- supersedes or deletes a memory; a server holding a connection LISTENs on `supamem_memories`. The
-- payload is ids and the operation only, never content (receivers read through RLS); NOTIFY is
-- transactional, so a rolled-back write announces nothing.
create function memory_private.announce_memory_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform pg_notify('supamem_memories', json_build_object(
        'user_id', coalesce(new.user_id, old.user_id),
        'memory_id', coalesce(new.id, old.id),
        'op', case
            when tg_op = 'DELETE' then 'purge'
            when tg_op = 'INSERT' then 'add'
            when new.deleted_at is not null and old.deleted_at is null then 'delete'
            when new.deleted_at is null and old.deleted_at is not null then 'restore'
            when new.superseded_by is not null and old.superseded_by is null then 'supersede'
            else 'update'
        end
    )::text);
    return null;
end
$$;

create trigger memories_announce_change
after insert or update or delete on memory.memories
for each row execute function memory_private.announce_memory_change();

revoke all on function memory_private.announce_memory_change() from public, anon, authenticated, service_role;
