-- Why: the noted summaries become summarize_conversation jobs in one set-based insert, under the
-- same keys a turn's own enqueue used ('conversation:<id>:<to_turn>'), due and created when the
-- turn noted them, so a re-delivered note adds nothing and the queue's ages count the wait. A note
-- and its job change in one transaction, so a crash loses neither; notes another caller holds are
-- skipped, not waited for, and a note whose conversation is gone just goes. p_user_ids keeps a
-- claim to its users' notes. A user erased while the batch ran fails its jobs' foreign key: the
-- batch is taken again, and the erased user's notes go. With summarize_conversation left out of
-- the job_kinds setting the notes wait (a turn notes nothing meanwhile). Returns how many notes it
-- took.
create function memory_private.queue_pending_summaries(p_limit integer default 1000, p_user_ids uuid[] default null)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_taken integer;
    v_notes tid[];
begin
    if not memory_private.setting('job_kinds') ? 'summarize_conversation' then
        return 0;
    end if;
    for attempt in 1..2 loop
        begin
            -- The batch by the rows' addresses (matched by key, a plan could read every note to
            -- join them), chosen in two statements: one condition for both (`p_user_ids is null or
            -- ...`) had a generic plan read every note to find a few users'.
            if p_user_ids is null then
                v_notes := array(
                    select n.ctid from memory_private.pending_summaries as n
                    order by n.conversation_id, n.to_turn
                    limit p_limit
                    for update skip locked
                );
            else
                -- The users' conversations in key order, each one's notes by one probe (joined as a
                -- set, a table never analyzed was read whole).
                v_notes := array(
                    select x.ctid
                    from (
                        select c.id from memory.conversations as c where c.user_id = any(p_user_ids) order by c.id
                    ) as c
                    cross join lateral (
                        select n.ctid, n.to_turn from memory_private.pending_summaries as n
                        where n.conversation_id = c.id
                        order by n.to_turn
                        limit p_limit
                        for update skip locked
                    ) as x
                    limit p_limit
                );
            end if;
            with taken as (
                delete from memory_private.pending_summaries as p
                where p.ctid = any(v_notes)
                returning p.conversation_id, p.to_turn, p.turns, p.noted_at
            ),
            queued as (
                insert into memory_private.jobs as j (
                    kind, payload, dedup_key, user_id, run_after, created_at, max_attempts
                )
                select
                    'summarize_conversation',
                    jsonb_build_object(
                        'conversation_id', t.conversation_id, 'from_turn', t.to_turn - t.turns + 1, 'to_turn', t.to_turn
                    ),
                    'conversation:' || t.conversation_id || ':' || t.to_turn, c.user_id, t.noted_at, t.noted_at,
                    (memory_private.setting('job_max_attempts'))::integer
                from taken as t
                join memory.conversations as c on c.id = t.conversation_id
                order by c.user_id, t.conversation_id, t.to_turn
                on conflict (kind, dedup_key) where dedup_key is not null do nothing
            )
            select count(*)::integer into v_taken from taken;
            return v_taken;
        exception when foreign_key_violation then
            if attempt = 2 then
                raise;
            end if;
        end;
    end loop;
end
$$;

revoke all on function memory_private.queue_pending_summaries(integer, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_summaries(integer, uuid[]) to service_role;
