-- Why: a claim for some users (a tenant's worker, a `--once` run) must find the jobs another pass
-- is making of their notes at that moment, so it waits for those notes instead of skipping them,
-- and it waits here, before it writes anything: waiting later, while its own queued jobs held the
-- users' waiter rows, it could close a cycle with a pass waiting for those rows. The notes it
-- finds it holds until it commits, so the passes it runs next take them (they skip only notes
-- others hold). Extraction notes, then summary notes, each in key order, as every claim takes
-- them (at most a pass's batch of extraction notes; a conversation's summary notes are few).
create function memory_private.hold_user_notes(p_kinds text[], p_user_ids uuid[])
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
    if 'extract' = any(p_kinds) then
        perform 1 from (
            select n.message_id from memory_private.pending_extractions as n
            where n.user_id = any(p_user_ids)
            order by n.user_id, n.message_id
            limit 1000
            for update
        ) as held;
    end if;
    if 'summarize_conversation' = any(p_kinds) then
        perform 1
        from (
            select c.id from memory.conversations as c where c.user_id = any(p_user_ids) order by c.id
        ) as c
        cross join lateral (
            select n.to_turn from memory_private.pending_summaries as n
            where n.conversation_id = c.id
            order by n.to_turn
            for update
        ) as held;
    end if;
end
$$;

revoke all on function memory_private.hold_user_notes(text[], uuid[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.hold_user_notes(text[], uuid[]) to service_role;
