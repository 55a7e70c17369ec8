-- Why: the noted questions of finished turns become extract jobs through the one queueing path
-- (memory_private.queue_extraction: not extracted yet, the gate open for the author, deduplicated
-- by the message). A note and its job change in one transaction, so a crash loses neither; notes
-- another caller holds are skipped, not waited for, and a deleted message's note just goes.
-- Returns how many notes it took (queued, or dropped: the gate closed since, or the message gone).
create function memory_private.queue_pending_extractions(p_limit integer default 1000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_taken bigint[];
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
    select coalesce(array_agg(t.message_id order by t.message_id), '{}') into v_taken from taken as t;
    perform memory_private.queue_extraction(t.message_id) from unnest(v_taken) as t (message_id);
    return cardinality(v_taken);
end
$$;

revoke all on function memory_private.queue_pending_extractions(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_extractions(integer) to service_role;

-- Why: pg_cron's minutely pass over the notes no worker has taken: the notes there when it starts,
-- in batches of 1,000 each committed on its own, so a backlog (an app running no extraction
-- workers for a while) never becomes one long transaction and never outgrows the pass. A
-- procedure that commits cannot carry a `set search_path` clause, so every name in it is
-- schema-qualified.
create procedure memory_private.run_extraction_queue()
language plpgsql
as $$
declare
    v_batches integer := ceil((select count(*) from memory_private.pending_extractions) / 1000.0)::integer;
begin
    for i in 1..v_batches loop
        exit when memory_private.queue_pending_extractions(1000) = 0;
        commit;
    end loop;
end
$$;

revoke all on procedure memory_private.run_extraction_queue() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_extraction_queue() to service_role;
