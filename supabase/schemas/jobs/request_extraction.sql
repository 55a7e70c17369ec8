-- Why: seed 002's `POST /api/memories/extract`: a user (or the app) asks to extract a whole
-- conversation now. Messages already extracted, queued or noted by their turn add nothing, and each
-- is queued through the same gate as a turn. Returns how many jobs were queued.
create function memory.request_extraction(p_conversation_id uuid)
returns integer
language plpgsql
set search_path = ''
as $$
begin
    return (
        select count(memory_private.enqueue_extraction(m.id))::integer
        from memory.messages as m
        where m.conversation_id = p_conversation_id and m.role = 'user'
            and (m.expires_at is null or m.expires_at > now())
            and not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id)
    );
end
$$;

revoke all on function memory.request_extraction(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.request_extraction(uuid) to authenticated, service_role;
