-- Why: the one place an extraction job is queued, for the turn trigger and for requests alike:
-- the gate is checked for the message's author (in together mode, a participant), a message
-- already extracted queues nothing, and a finished job of a message that was never extracted
-- (skipped while the gate was closed) is queued again. Internal: callers use enqueue_extraction.
create function memory_private.queue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_message memory.messages;
    v_author uuid;
begin
    select m.* into v_message from memory.messages as m where m.id = p_message_id and m.role = 'user';
    if not found or exists (select 1 from memory.memory_extractions as e where e.source_message_id = p_message_id) then
        return null;
    end if;
    v_author := coalesce(v_message.author_id, v_message.user_id);
    if memory_private.gate_reason(v_author, v_message.id) is not null then
        return null;
    end if;
    return memory_private.enqueue(
        'extract',
        jsonb_build_object('source_message_id', v_message.id, 'conversation_id', v_message.conversation_id),
        'message:' || v_message.id, v_author, null, true
    );
end
$$;

revoke all on function memory_private.queue_extraction(bigint) from public, anon, authenticated, service_role;

-- Why: extraction on request: a signed-in caller may only queue messages they wrote.
create function memory_private.enqueue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
begin
    if (select auth.uid()) is not null and (select auth.uid()) is distinct from (
        select coalesce(m.author_id, m.user_id) from memory.messages as m where m.id = p_message_id
    ) then
        return null;
    end if;
    return memory_private.queue_extraction(p_message_id);
end
$$;

revoke all on function memory_private.enqueue_extraction(bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_extraction(bigint) to authenticated, service_role;
