-- Why: seed 002's extract_memories returns the memories a conversation gave, so a caller that
-- asked for its extraction (memory.request_extraction) waits until none of its questions is still
-- noted by its turn or held by an extract job not finished (queued, waiting out a rate limit or a
-- retry, or running). Counts those questions; anyone who may not read the conversation gets 0.
create function memory.extraction_pending(p_conversation_id uuid)
returns integer
language plpgsql
stable
set search_path = ''
as $$
begin
    return memory_private.extraction_pending(p_conversation_id);
end
$$;

revoke all on function memory.extraction_pending(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.extraction_pending(uuid) to authenticated, service_role;

-- Why: memory.extraction_pending's body: one check that the caller may read the conversation, then
-- a read as the owner (notes and jobs are the service's), each question's note and job by key.
create function memory_private.extraction_pending(p_conversation_id uuid)
returns integer
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    if not memory_private.reads_conversation(p_conversation_id) then
        return 0;
    end if;
    -- The conversation's questions through its (conversation, turn) index.
    return (
        select count(*)::integer
        from memory.messages as m
        where m.conversation_id = p_conversation_id and m.role = 'user'
            and (m.expires_at is null or m.expires_at > now())
            and (
                exists (
                    select 1 from memory_private.pending_extractions as p
                    where p.user_id = coalesce(m.author_id, m.user_id) and p.message_id = m.id
                )
                or exists (
                    select 1 from memory_private.jobs as j
                    where j.kind = 'extract' and j.dedup_key = 'message:' || m.id and j.status in ('queued', 'running')
                )
            )
    );
end
$$;

revoke all on function memory_private.extraction_pending(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.extraction_pending(uuid) to authenticated, service_role;
