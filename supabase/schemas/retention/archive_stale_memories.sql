-- Why: the archival job also archives memories past their expiry, in bounded batches like the rest.
create function memory_private.archive_stale_memories(
    p_now timestamptz default now(), p_batch_size integer default null
)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
    v_stale integer;
    v_expired integer;
begin
    with doomed as (
        select m.id
        from memory.memories as m
        inner join memory.users as u on m.user_id = u.id
        where m.active and not m.archived and not m.pinned and m.deleted_at is null
            and not u.long_term_opt_in
            and m.created_at < p_now - (memory_private.setting('memory_archive_age') #>> '{}')::interval
            and coalesce(m.last_referenced_at, m.created_at)
            < p_now - (memory_private.setting('memory_archive_unreferenced') #>> '{}')::interval
        limit v_batch
        for update of m skip locked
    )
    update memory.memories as m set archived = true from doomed where m.id = doomed.id;
    get diagnostics v_stale = row_count;
    with doomed as (
        select m.id
        from memory.memories as m
        where not m.archived and m.deleted_at is null and m.expires_at <= p_now
        limit v_batch
        for update skip locked
    )
    update memory.memories as m set archived = true from doomed where m.id = doomed.id;
    get diagnostics v_expired = row_count;
    return v_stale + v_expired;
end
$$;

revoke all on function memory_private.archive_stale_memories(timestamp with time zone, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.archive_stale_memories(timestamp with time zone, integer) to service_role;
