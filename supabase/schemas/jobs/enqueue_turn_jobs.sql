-- Why: seed 004's fire-and-forget after the assistant answers, done in the database so no app
-- path can forget it: extraction when the gate is open for the turn's author, a conversation
-- summary every summary_interval turns, a title after the first turn. Dedup keys make a
-- re-delivered trigger harmless.
create function memory_private.enqueue_turn_jobs()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_interval integer := (memory_private.setting('summary_interval'))::integer;
begin
    -- Imported history queues extraction only when the import asks for it, and no summaries.
    if coalesce(current_setting('memory.importing', true), '') = 'on' and memory_private.importing() then
        return null;
    end if;
    perform memory_private.queue_extraction(m.id)
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

create trigger messages_enqueue_turn_jobs
after insert on memory.messages
for each row when (new.role = 'assistant')
execute function memory_private.enqueue_turn_jobs();

revoke all on function memory_private.enqueue_turn_jobs() from public, anon, authenticated, service_role;
