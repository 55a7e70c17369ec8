-- Why: the turns an author wrote in other people's conversations, question and answer, leave
-- with the author, and so does what was made of their words there: the conversation summaries
-- that covered one of those turns go (later turns are summarised again as usual), a title made
-- from an erased first turn is cleared (the next turn asks for a new one), and the results of
-- those conversations' summary and title jobs are dropped. The owner's weekly and monthly
-- summaries are the owner's own long-term memory and are kept. Returns how many messages went.
-- Shared by erase_user and account deletion.
create function memory_private.delete_authored_turns(p_author uuid)
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

revoke all on function memory_private.delete_authored_turns(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.delete_authored_turns(uuid) to service_role;

-- Why: deleting a Supabase Auth user cascades to memory.users without erase_user; this trigger
-- takes the authored turns with it on every path.
create function memory_private.users_delete_authored_turns()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform memory_private.delete_authored_turns(old.id);
    return old;
end
$$;

create trigger users_delete_authored_turns
before delete on memory.users
for each row execute function memory_private.users_delete_authored_turns();

revoke all on function memory_private.users_delete_authored_turns() from public, anon, authenticated, service_role;
