-- Seed 002's `POST /api/memories/extract`: extraction on request, for a whole conversation.

-- Why: the one place an extraction job is queued, for the turn trigger and for requests alike;
-- it re-checks the gate, and a signed-in caller may only queue their own messages.
create function memory_private.enqueue_extraction(p_message_id bigint)
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
    if not found then
        return null;
    end if;
    v_author := coalesce(v_message.author_id, v_message.user_id);
    if (select auth.uid()) is not null and (select auth.uid()) <> v_author then
        return null;
    end if;
    if memory_private.memory_gate(v_author, v_message.id) is not null then
        return null;
    end if;
    return memory_private.enqueue(
        'extract',
        jsonb_build_object('source_message_id', v_message.id, 'conversation_id', v_message.conversation_id),
        'message:' || v_message.id, v_author
    );
end
$$;
grant execute on function memory_private.enqueue_extraction(bigint) to authenticated, service_role;

-- The turn trigger now queues through the same function.
create or replace function memory_private.enqueue_turn_jobs()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_interval integer := (memory_private.setting('summary_interval'))::integer;
begin
    perform memory_private.enqueue_extraction(m.id)
    from memory.messages as m
    where m.conversation_id = new.conversation_id and m.turn_number = new.turn_number and m.role = 'user';
    if new.turn_number % v_interval = 0 then
        perform memory_private.enqueue(
            'summarize_conversation',
            jsonb_build_object(
                'conversation_id', new.conversation_id,
                'from_turn', new.turn_number - v_interval + 1, 'to_turn', new.turn_number
            ),
            'conversation:' || new.conversation_id || ':' || new.turn_number, new.user_id
        );
    end if;
    if new.turn_number = 1 and exists (
        select 1 from memory.conversations as c where c.id = new.conversation_id and c.title is null
    ) then
        perform memory_private.enqueue(
            'title', jsonb_build_object('conversation_id', new.conversation_id),
            'title:' || new.conversation_id, new.user_id
        );
    end if;
    return null;
end
$$;

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
