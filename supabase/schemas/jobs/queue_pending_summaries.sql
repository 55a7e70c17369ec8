-- Why: the noted summaries become summarize_conversation jobs in one set-based insert, under the
-- same keys a turn's own enqueue used ('conversation:<id>:<to_turn>'), so a re-delivered note
-- adds nothing. A note and its job change in one transaction, so a crash loses neither; notes
-- another caller holds are skipped, not waited for. With summarize_conversation left out of the
-- job_kinds setting the notes wait (a turn notes nothing meanwhile). Returns how many notes it took.
create function memory_private.queue_pending_summaries(p_limit integer default 1000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_taken integer;
begin
    if not memory_private.setting('job_kinds') ? 'summarize_conversation' then
        return 0;
    end if;
    with taken as (
        delete from memory_private.pending_summaries as p
        where (p.conversation_id, p.to_turn) in (
            select n.conversation_id, n.to_turn from memory_private.pending_summaries as n
            order by n.noted_at, n.conversation_id, n.to_turn
            limit p_limit
            for update skip locked
        )
        returning p.conversation_id, p.to_turn, p.turns, p.noted_at
    ),
    queued as (
        insert into memory_private.jobs as j (kind, payload, dedup_key, user_id, run_after, max_attempts)
        select
            'summarize_conversation',
            jsonb_build_object(
                'conversation_id', t.conversation_id, 'from_turn', t.to_turn - t.turns + 1, 'to_turn', t.to_turn
            ),
            'conversation:' || t.conversation_id || ':' || t.to_turn, c.user_id, t.noted_at,
            (memory_private.setting('job_max_attempts'))::integer
        from taken as t
        join memory.conversations as c on c.id = t.conversation_id
        order by t.noted_at, t.conversation_id, t.to_turn
        on conflict (kind, dedup_key) where dedup_key is not null do nothing
    )
    select count(*)::integer into v_taken from taken;
    return v_taken;
end
$$;

revoke all on function memory_private.queue_pending_summaries(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_summaries(integer) to service_role;
