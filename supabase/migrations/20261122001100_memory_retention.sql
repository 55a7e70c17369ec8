-- Memory retention: archive what is old and forgotten, purge what users deleted long ago.

insert into memory_private.settings (key, value, description) values
('memory_archive_age', '"2 years"', 'Memories older than this may be archived ...'),
('memory_archive_unreferenced', '"6 months"', '... when not referenced for this long (unless the user opted in).'),
('memory_purge_after', '"30 days"', 'Soft-deleted memories are purged this long after deletion.');

-- Why: seed 004's background task: archive memories older than two years that were not referenced
-- in six months, unless the user opted in to long-term storage. Pinned memories stay. Bounded
-- batches; p_now lets tests and backfills run it at a chosen instant.
create function memory_private.archive_stale_memories(
    p_now timestamptz default now(), p_batch_size integer default null
)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_archived integer;
begin
    with doomed as (
        select m.id
        from memory.memories as m
        join memory.users as u on u.id = m.user_id
        where m.active and not m.archived and not m.pinned and m.deleted_at is null
            and not u.long_term_opt_in
            and m.created_at < p_now - (memory_private.setting('memory_archive_age') #>> '{}')::interval
            and coalesce(m.last_referenced_at, m.created_at)
            < p_now - (memory_private.setting('memory_archive_unreferenced') #>> '{}')::interval
        limit coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer)
        for update of m skip locked
    )
    update memory.memories as m set archived = true from doomed where m.id = doomed.id;
    get diagnostics v_archived = row_count;
    return v_archived;
end
$$;
grant execute on function memory_private.archive_stale_memories(timestamptz, integer) to service_role;

-- Why: soft delete keeps an undo window; after memory_purge_after the memory is gone for good.
-- Its history stays (append-only) until the user is erased.
create function memory_private.purge_deleted_memories(
    p_now timestamptz default now(), p_batch_size integer default null
)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_purged integer;
begin
    with doomed as (
        select m.id
        from memory.memories as m
        where m.deleted_at < p_now - (memory_private.setting('memory_purge_after') #>> '{}')::interval
        limit coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer)
        for update skip locked
    )
    delete from memory.memories as m using doomed where m.id = doomed.id;
    get diagnostics v_purged = row_count;
    return v_purged;
end
$$;
grant execute on function memory_private.purge_deleted_memories(timestamptz, integer) to service_role;
create index memories_deleted_at_idx on memory.memories (deleted_at) where deleted_at is not null;
create index memories_archive_candidates_idx on memory.memories (created_at)
where active and not archived and not pinned and deleted_at is null;

insert into memory_private.schedules (name, schedule, command) values
('supamem-archive-memories', '23 2 * * *', 'select memory_private.archive_stale_memories()'),
('supamem-purge-memories', '41 2 * * *', 'select memory_private.purge_deleted_memories()');

select memory_private.schedule_jobs();

revoke execute on all routines in schema memory, memory_private from public;
