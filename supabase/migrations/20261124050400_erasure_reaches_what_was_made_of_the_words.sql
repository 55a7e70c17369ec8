-- Erasing an author reaches what was made of their words in other people's conversations.
--
-- Why: an erased participant's turns left the owner's conversation (20261124050000), but the
-- summaries of those turns, a title generated from their first question, and the finished jobs
-- whose results carry the generated text still quoted them. The summaries that covered one of
-- the erased turns go (later turns are summarised again as usual), a title made from an erased
-- first turn is cleared (the next turn asks for a new one), and the results of the summary and
-- title jobs of those conversations are dropped. The owner's weekly and monthly summaries are the
-- owner's own long-term memory and are kept.
create or replace function memory_private.delete_authored_turns(p_author uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_deleted integer;
    v_conversations uuid [];
    v_turns integer [];
begin
    with gone as (
        delete from memory.messages as m
        using memory.messages as q
        where q.author_id = p_author
            and q.user_id <> p_author
            and q.role = 'user'
            and m.conversation_id = q.conversation_id
            and m.turn_number = q.turn_number
        returning m.conversation_id, m.turn_number
    )
    select count(*), array_agg(g.conversation_id), array_agg(g.turn_number)
    into v_deleted, v_conversations, v_turns
    from gone as g;
    if v_deleted = 0 then
        return 0;
    end if;
    delete from memory.conversation_summaries as s
    using unnest(v_conversations, v_turns) as e (conversation_id, turn_number)
    where s.conversation_id = e.conversation_id and e.turn_number between s.from_turn and s.to_turn;
    update memory.conversations as c set title = null
    from unnest(v_conversations, v_turns) as e (conversation_id, turn_number)
    where c.id = e.conversation_id and e.turn_number = 1;
    update memory_private.jobs as j set result = null
    where j.kind in ('summarize_conversation', 'title')
        and j.result is not null
        and (j.payload ->> 'conversation_id')::uuid = any(v_conversations);
    return v_deleted;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
