-- Why: turn numbers must be gap-free under concurrent writers, and the window, the TTL and who may
-- write must hold on every write path (RPCs, Data API inserts, jobs). So the table numbers its own
-- messages under the conversation's row lock (an import, memory.import_messages, numbers its batch
-- the same way set-based). Security definer: a participant's message must move
-- the owner's conversation counter and trim its window, which the caller may not write.
--
-- Every message notes itself for an embedding (memory_private.pending_embeddings). An answer also
-- does seed 004's fire-and-forget work for its turn, here so no write path can
-- forget it and with the conversation row already at hand: it notes the turn's question for
-- extraction when the gate is open for its author (memory_private.pending_extractions), notes a
-- conversation summary every summary_interval turns (memory_private.pending_summaries) and queues a
-- title after the first turn. Keys make a re-delivered turn harmless.
create function memory_private.assign_turn()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_conversation memory.conversations;
    v_next integer;
    v_join boolean;
    v_interval integer;
    v_question bigint;
    v_author uuid;
begin
    -- memory.import_messages numbers, locks and trims its batch itself. The setting is unset (null)
    -- on a connection that never imported: coalesced, so only an import's rows ask importing().
    if coalesce(current_setting('memory.importing', true), '') = 'on' and memory_private.importing() then
        return new;
    end if;
    select c.* into v_conversation from memory.conversations as c where c.id = new.conversation_id for update;
    if not found or v_conversation.expires_at <= now() then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if (select auth.uid()) is not null and v_conversation.user_id <> (select auth.uid()) and not exists (
        select 1 from memory.participants as p
        where p.conversation_id = new.conversation_id and p.user_id = (select auth.uid())
    ) then
        -- A caller who cannot read the conversation learns nothing, not even that it exists.
        if v_conversation.tenant_id = any(memory_private.administered_tenants()) then
            raise exception using errcode = '42501', message = 'only the owner and participants write to a conversation';
        end if;
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if v_conversation.archived then
        raise exception using errcode = '55000', message = 'conversation is archived',
            hint = 'Unarchive it before adding messages.';
    end if;
    -- An answer joins the open turn; a user message, or an answer with no open turn, opens one.
    v_join := new.role = 'assistant' and v_conversation.last_turn > 0 and not exists (
        select 1 from memory.messages as m
        where m.conversation_id = new.conversation_id
            and m.turn_number = v_conversation.last_turn
            and m.role = 'assistant'
    );
    v_next := case when v_join then v_conversation.last_turn else v_conversation.last_turn + 1 end;
    if new.turn_number < 1 then
        raise exception using errcode = '23514', message = format('turn number %s must be positive', new.turn_number);
    end if;
    if new.turn_number is not null and new.turn_number <> v_next then
        if new.turn_number <= v_conversation.last_turn then
            raise exception using errcode = '23505', message = format('turn %s already exists', new.turn_number),
                detail = format('the next turn number for this %s message is %s', new.role, v_next);
        end if;
        raise exception using errcode = '23514', message = format('turn %s would leave a gap', new.turn_number),
            detail = format('the next turn number for this %s message is %s', new.role, v_next);
    end if;
    new.turn_number := v_next;
    new.user_id := v_conversation.user_id;
    new.tenant_id := v_conversation.tenant_id;
    new.created_at := now();
    new.expires_at := now() + v_conversation.ttl;
    -- The message waits for its vector; the minutely scan queues its user's embed job.
    insert into memory_private.pending_embeddings (user_id, message_id) values (new.user_id, new.id);
    -- Only a new turn moves the conversation (an answer joining its turn needs no second update),
    -- and pushes exactly one turn out of the window: older ones left it on earlier turns.
    if not v_join then
        update memory.conversations as c
        set last_turn = v_next, updated_at = now(), expires_at = now() + c.ttl
        where c.id = new.conversation_id;
        if v_conversation.window_turns is not null then
            delete from memory.messages as m
            where m.conversation_id = new.conversation_id
                and m.turn_number = v_next - v_conversation.window_turns;
        end if;
    end if;
    if new.role = 'assistant' then
        select m.id into v_question from memory.messages as m
        where m.conversation_id = new.conversation_id and m.turn_number = v_next and m.role = 'user';
        v_author := memory_private.extraction_author(v_question);
        if v_author is not null then
            -- A regenerated answer (the first deleted, a second added) finds its question noted already.
            insert into memory_private.pending_extractions (user_id, message_id) values (v_author, v_question)
            on conflict do nothing;
        end if;
        v_interval := (memory_private.setting('summary_interval'))::integer;
        if v_next % v_interval = 0 and memory_private.setting('job_kinds') ? 'summarize_conversation' then
            insert into memory_private.pending_summaries (conversation_id, to_turn, turns)
            values (new.conversation_id, v_next, v_interval)
            on conflict do nothing;
        end if;
        if v_next = 1 and v_conversation.title is null then
            perform memory_private.enqueue(
                'title', jsonb_build_object('conversation_id', new.conversation_id),
                'title:' || new.conversation_id, new.user_id
            );
        end if;
    end if;
    return new;
end
$$;

create trigger messages_assign_turn
before insert on memory.messages
for each row execute function memory_private.assign_turn();

revoke all on function memory_private.assign_turn() from public, anon, authenticated, service_role;
