-- A conversation says how many of its questions still wait for extraction, so a caller that asked
-- for it can wait for the memories it gives (seed 002's extract_memories).
set check_function_bodies = off;

create or replace function memory.extraction_pending(p_conversation_id uuid)
returns integer
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    if not memory_private.reads_conversation(p_conversation_id) then
        return 0;
    end if;
    -- The conversation's questions through its (conversation, turn) index, each note and job by key.
    return (
        select count(*)::integer
        from memory.messages as m
        where m.conversation_id = p_conversation_id and m.role = 'user'
            and (m.expires_at is null or m.expires_at > now())
            and (
                exists (select 1 from memory_private.pending_extractions as p where p.message_id = m.id)
                or exists (
                    select 1 from memory_private.jobs as j
                    where j.kind = 'extract' and j.dedup_key = 'message:' || m.id and j.status in ('queued', 'running')
                )
            )
    );
end
$function$;


revoke all on function memory.extraction_pending(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.extraction_pending(uuid) to authenticated, service_role;
