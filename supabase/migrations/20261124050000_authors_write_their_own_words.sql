-- Together mode: only an author writes their own words, and an author's words leave with them.
--
-- A message's author feeds that author's memory (the gate checks the author's primary profile),
-- so whoever may name the author may write someone else's memories. A signed-in caller is
-- therefore always the author of what they write: the owner of a conversation writes as the
-- owner, a participant posts in the shared conversation from their own session as themselves,
-- and neither may name the other. Only the service role (a trusted server) names an author.
-- A participant's profile is theirs to choose, never the owner's.
--
-- When an author's user is deleted (Supabase's delete account, or erase_user), the turns they
-- wrote in other people's conversations go with them, question and answer, and what was made of
-- them there: a question whose author became NULL would read as the owner's own words and could
-- become the owner's memory.

-- Why: the owner, or a participant of a shared conversation, may write to it; nobody else, and
-- a caller who may not even read it is told it is not found (42501 would confirm it exists).
create or replace function memory_private.assign_turn()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_conversation memory.conversations;
    v_next integer;
    v_join boolean;
begin
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
    return new;
end
$$;

-- Why: a signed-in caller is the author of the question they write (a participant's question is
-- recorded as theirs even when no author is named) and may name nobody else; the author must
-- belong to the conversation whoever writes. Runs after messages_assign_turn (trigger names
-- fire in alphabetical order), which has filled the owner.
create or replace function memory_private.check_message_author()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_caller uuid := (select auth.uid());
begin
    if v_caller is not null then
        if new.role = 'user' and new.author_id is null and v_caller <> new.user_id then
            new.author_id := v_caller;
        end if;
        if new.author_id is not null and new.author_id <> v_caller then
            raise exception using
                errcode = '42501',
                message = 'only the author writes their own words',
                detail = format('author %s, caller %s', new.author_id, v_caller),
                hint = 'A participant posts from their own session; leave the author out.';
        end if;
    end if;
    if new.author_id is not null and new.author_id <> new.user_id and not exists (
        select 1 from memory.participants as p
        where p.conversation_id = new.conversation_id and p.user_id = new.author_id
    ) then
        raise exception using
            errcode = '23503',
            message = 'message author is not a participant of the conversation',
            detail = format('author %s, conversation %s', new.author_id, new.conversation_id);
    end if;
    return new;
end
$$;

drop policy "Owners write messages to their conversations" on memory.messages;
create policy "Owners and participants write messages to their conversations" on memory.messages
for insert to authenticated
with check (
    user_id = (select auth.uid())
    or conversation_id = any((select memory_private.joined_conversations())::uuid[])
);

-- A participant chooses their own profile (the update policy); the owner only invites.
drop policy "Owners add participants" on memory.participants;
create policy "Owners add participants" on memory.participants
for insert to authenticated
with check (
    (profile_id is null or user_id = (select auth.uid()))
    and exists (
        select 1 from memory.conversations as c
        where c.id = conversation_id and c.user_id = (select auth.uid())
    )
);

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

-- An author never becomes NULL (which would read as the owner): their messages go instead.
alter table memory.messages drop constraint messages_author_id_fkey;
alter table memory.messages add constraint messages_author_id_fkey
foreign key (author_id) references memory.users (id) on delete cascade;

-- Why: the right to be forgotten in one call: the user row goes and with it, by cascade, their
-- conversations, messages, memories, history, summaries and state; the turns they wrote in other
-- people's conversations go too, question and answer. Nothing else of anyone else's is touched.
create or replace function memory.erase_user(p_user_id uuid default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_authored integer;
    v_memories integer;
    v_conversations integer;
begin
    select count(*) into v_memories from memory.memories as m where m.user_id = v_user;
    select count(*) into v_conversations from memory.conversations as c where c.user_id = v_user;
    v_authored := memory_private.delete_authored_turns(v_user);
    delete from memory.users as u where u.id = v_user;
    if not found then
        raise exception using errcode = 'P0002', message = 'user not found';
    end if;
    return jsonb_build_object(
        'user_id', v_user, 'memories', v_memories, 'conversations', v_conversations,
        'messages_in_other_conversations', v_authored
    );
end
$$;

-- A participant's profile says which of their profiles their memory follows: nobody else's
-- business, so signed-in readers of the participant list get every column but that one.
revoke select on memory.participants from authenticated;
grant select (conversation_id, user_id, tenant_id, joined_at) on memory.participants to authenticated;

revoke execute on all routines in schema memory, memory_private from public;
