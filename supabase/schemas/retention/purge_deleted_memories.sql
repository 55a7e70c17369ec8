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

revoke all on function memory_private.purge_deleted_memories(timestamp with time zone, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.purge_deleted_memories(timestamp with time zone, integer) to service_role;
