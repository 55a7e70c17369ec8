-- Seed 002's `POST /api/memories/extract`: extraction on request, for a whole conversation.

-- Why: a user (or the app) asks to extract a conversation now; messages already extracted or
-- already queued add nothing. Returns how many jobs were queued.
create function memory.request_extraction(p_conversation_id uuid)
returns integer
language sql
set search_path = ''
as $$
    select count(memory_private.enqueue_extraction(m.id))::integer
    from memory.messages as m
    where m.conversation_id = p_conversation_id and m.role = 'user'
        and (m.expires_at is null or m.expires_at > now())
        and not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id)
$$;
grant execute on function memory.request_extraction(uuid) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
