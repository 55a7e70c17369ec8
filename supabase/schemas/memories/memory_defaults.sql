-- Why: the gate holds for every write path, so the table enforces it: a memory that names a
-- source message takes that message's conversation, turn and mode, and is refused (42501)
-- unless the gate opens. Memories a user writes by hand (no source message) need no gate. A new
-- memory takes its user's next number.
create function memory_private.memory_defaults()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_reason text;
    v_message memory.messages;
begin
    -- Only the kit's functions insert memories; an import numbers its batch itself.
    if tg_op = 'INSERT' and new.number is null then
        -- The user's next number: the user's row, locked until commit, orders concurrent writers
        -- (who take it before any memory's: memory_private.lock_memory_writer).
        update memory.users as u set memories_numbered = u.memories_numbered + 1 where u.id = new.user_id
        returning u.memories_numbered into new.number;
    end if;
    -- Another user's row is RLS's to refuse (42501); resolve nothing more for it here. Cascades
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
    if new.profile_id is null then
        raise exception using errcode = '23502', message = 'memory needs a profile',
            hint = 'Create a primary profile for the user, or pass one.';
    end if;
    return new;
end
$$;

create trigger memories_defaults
before insert or update of user_id, tenant_id, source_message_id, profile_id on memory.memories
for each row execute function memory_private.memory_defaults();

revoke all on function memory_private.memory_defaults() from public, anon, authenticated, service_role;

create function memory_private.first_profile()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if new.profile_id is null
        and ((select auth.uid()) is null or new.user_id = (select auth.uid()))
        and not exists (select 1 from memory.profiles as p where p.user_id = new.user_id) then
        insert into memory.profiles (user_id, tenant_id, is_primary)
        select u.id, u.tenant_id, true from memory.users as u where u.id = new.user_id
        on conflict (user_id) where is_primary do nothing;
    end if;
    return new;
end
$$;

create trigger memories_before_defaults_first_profile
before insert on memory.memories
for each row execute function memory_private.first_profile();

revoke all on function memory_private.first_profile() from public, anon, authenticated, service_role;
