-- A user's first memory makes their primary profile when they have none at all.
--
-- Why: memories belong to a profile, and a new user of the kit (seed 002's create_memory, the
-- README's first example) has none yet; refusing the memory until the app created one made the
-- first call fail. A user with profiles but no primary one still chooses (the error stays), and
-- a signed-in caller still resolves nothing for another user's row.

create or replace function memory_private.memory_defaults()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_reason text;
    v_message memory.messages;
begin
    -- Another user's row is RLS's to refuse (42501); resolve nothing for it here. Cascades
    -- (an owner deleting a together conversation) run as postgres with the caller's claims.
    if (select auth.uid()) is not null and new.user_id is distinct from (select auth.uid()) then
        return new;
    end if;
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if new.source_message_id is not null
        and (tg_op = 'INSERT' or new.source_message_id is distinct from old.source_message_id) then
        v_reason := memory_private.memory_gate(new.user_id, new.source_message_id);
        if v_reason is not null then
            raise exception using errcode = '42501', message = 'memory not allowed: ' || v_reason;
        end if;
        select m.* into v_message from memory.messages as m where m.id = new.source_message_id;
        new.source_conversation_id := v_message.conversation_id;
        new.turn_index := v_message.turn_number;
        new.origin_mode := (select c.mode from memory.conversations as c where c.id = v_message.conversation_id);
    end if;
    new.profile_id := memory_private.memory_profile(new.user_id, new.source_message_id, new.profile_id);
    if new.profile_id is null and not exists (select 1 from memory.profiles as p where p.user_id = new.user_id) then
        insert into memory.profiles (user_id, tenant_id, is_primary)
        values (new.user_id, new.tenant_id, true)
        on conflict (user_id) where is_primary do nothing;
        new.profile_id := (select p.id from memory.profiles as p where p.user_id = new.user_id and p.is_primary);
    end if;
    if new.profile_id is null then
        raise exception using errcode = '23502', message = 'memory needs a profile',
            hint = 'Create a primary profile for the user, or pass one.';
    end if;
    return new;
end
$$;
