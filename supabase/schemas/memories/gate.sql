-- Why: seed 004's key rule. A conversation may create a memory for a user only when the profile
-- that user selected in it is their primary profile, they wrote the source message, the
-- conversation's "remember" toggle is on (off by default in swiss mode) and they have not paused
-- memory. Generic chats (no profile) never do. Returns the reason when it says no. Internal (the
-- turn trigger asks it about any participant); callers go through memory_gate.
create function memory_private.gate_reason(p_user_id uuid, p_message_id bigint)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
    v_message memory.messages;
    v_conversation memory.conversations;
    v_profile_id uuid;
begin
    select m.* into v_message from memory.messages as m where m.id = p_message_id;
    if not found then
        return 'source message not found';
    end if;
    if coalesce(v_message.author_id, v_message.user_id) <> p_user_id or v_message.role <> 'user' then
        -- A message of a conversation the user takes no part in is not theirs to know of.
        if v_message.user_id <> p_user_id and not exists (
            select 1 from memory.participants as p
            where p.conversation_id = v_message.conversation_id and p.user_id = p_user_id
        ) then
            return 'source message not found';
        end if;
        return 'the user did not write the source message';
    end if;
    select c.* into v_conversation from memory.conversations as c where c.id = v_message.conversation_id;
    v_profile_id := case
        when v_conversation.user_id = p_user_id then v_conversation.profile_id
        else (select p.profile_id from memory.participants as p
              where p.conversation_id = v_conversation.id and p.user_id = p_user_id)
    end;
    if v_profile_id is null then
        return 'no profile is selected in the conversation';
    end if;
    if not exists (
        select 1 from memory.profiles as p where p.id = v_profile_id and p.user_id = p_user_id and p.is_primary
    ) then
        return 'the selected profile is not the user''s primary profile';
    end if;
    if not v_conversation.remember then
        return 'remember is off in this conversation';
    end if;
    if (select u.memory_paused from memory.users as u where u.id = p_user_id) then
        return 'the user has paused memory';
    end if;
    return null;
end
$$;

revoke all on function memory_private.gate_reason(uuid, bigint) from public, anon, authenticated, service_role;

-- Why: the gate as callers may ask it: a signed-in caller only about themselves (anything else
-- reads as not found, so it reveals nothing of other users).
create function memory_private.memory_gate(p_user_id uuid, p_message_id bigint)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    if (select auth.uid()) is not null and p_user_id is distinct from (select auth.uid()) then
        return 'source message not found';
    end if;
    return memory_private.gate_reason(p_user_id, p_message_id);
end
$$;

revoke all on function memory_private.memory_gate(uuid, bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.memory_gate(uuid, bigint) to authenticated, service_role;

create function memory_private.long_term_profile(p_conversation_id uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
        select c.profile_id
        from memory.conversations as c
        inner join memory.profiles as p on c.profile_id = p.id and c.user_id = p.user_id and p.is_primary
        inner join memory.users as u on c.user_id = u.id and not u.memory_paused
        where c.id = p_conversation_id and c.remember
    );
end
$$;

revoke all on function memory_private.long_term_profile(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.long_term_profile(uuid) to service_role;
