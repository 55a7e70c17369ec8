-- Why: one rule for whether a message may be queued for extraction, for the turn and for
-- requests alike: a user message not extracted yet, whose author (in together mode, a
-- participant) has the gate open. Returns that author, or null.
create function memory_private.extraction_author(p_message_id bigint)
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_author uuid;
begin
    select coalesce(m.author_id, m.user_id) into v_author
    from memory.messages as m
    where m.id = p_message_id and m.role = 'user'
        and not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id);
    if v_author is null or memory_private.gate_reason(v_author, p_message_id) is not null then
        return null;
    end if;
    return v_author;
end
$$;

revoke all on function memory_private.extraction_author(bigint) from public, anon, authenticated, service_role;

-- Why: the one place an extraction job is queued, for the turns' notes and for requests alike
-- (memory_private.extraction_author decides), and a finished job of a message that was never
-- extracted (skipped while the gate was closed) is queued again. Internal: callers use
-- enqueue_extraction.
create function memory_private.queue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_author uuid := memory_private.extraction_author(p_message_id);
begin
    if v_author is null then
        return null;
    end if;
    return memory_private.enqueue(
        'extract',
        jsonb_build_object(
            'source_message_id', p_message_id,
            'conversation_id', (select m.conversation_id from memory.messages as m where m.id = p_message_id)
        ),
        'message:' || p_message_id, v_author, null, true
    );
end
$$;

revoke all on function memory_private.queue_extraction(bigint) from public, anon, authenticated, service_role;

-- Why: extraction on request: a signed-in caller may only queue messages they wrote, and a
-- message its turn noted for extraction is on its way already.
create function memory_private.enqueue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_author uuid := (select coalesce(m.author_id, m.user_id) from memory.messages as m where m.id = p_message_id);
begin
    if (select auth.uid()) is not null and (select auth.uid()) is distinct from v_author or exists (
        select 1 from memory_private.pending_extractions as p where p.user_id = v_author and p.message_id = p_message_id
    ) then
        return null;
    end if;
    return memory_private.queue_extraction(p_message_id);
end
$$;

revoke all on function memory_private.enqueue_extraction(bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_extraction(bigint) to authenticated, service_role;
