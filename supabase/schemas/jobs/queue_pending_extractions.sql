-- Why: the noted questions of finished turns become extract jobs through the one queueing path
-- (memory_private.queue_extraction: not extracted yet, the gate open for the author, deduplicated
-- by the message). A note and its job change in one transaction, so a crash loses neither; notes
-- another caller holds are skipped, not waited for, and a deleted message's note just goes.
-- Returns how many jobs were queued.
create function memory_private.queue_pending_extractions(p_limit integer default 1000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_queued integer;
begin
    with taken as (
        delete from memory_private.pending_extractions as p
        where p.message_id in (
            select n.message_id from memory_private.pending_extractions as n
            order by n.message_id
            limit p_limit
            for update skip locked
        )
        returning p.message_id
    )
    select count(memory_private.queue_extraction(t.message_id))::integer into v_queued from taken as t;
    return v_queued;
end
$$;

revoke all on function memory_private.queue_pending_extractions(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_extractions(integer) to service_role;
