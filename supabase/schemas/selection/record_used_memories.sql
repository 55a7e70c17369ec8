-- Why: the one-round-trip context hands the app the memory ids it chose; when the answer is stored
-- with them (add_turn / add_message p_used_memory_ids), that is their use. Counting it here, on
-- the write, keeps the context read read-only (it can run on a read replica).
create function memory_private.record_used_memories()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform memory_private.reinforce(new.used_memory_ids, null, new.user_id);
    return null;
end
$$;

create trigger messages_record_used_memories
after insert on memory.messages
for each row when (new.role = 'assistant' and cardinality(new.used_memory_ids) > 0)
execute function memory_private.record_used_memories();

revoke all on function memory_private.record_used_memories() from public, anon, authenticated, service_role;

-- Why: ids returned to the app are attached to the assistant message once it exists. An answer
-- that is missing or not the caller's (the service role names the user it acts for) is P0002.
create function memory.mark_memories_used(p_message_id bigint, p_memory_ids uuid[], p_user_id uuid default null)
returns void
language plpgsql
set search_path = ''
as $$
begin
    if not memory_private.record_selection(p_memory_ids, p_message_id, p_user_id) then
        raise exception using errcode = 'P0002', message = format('no answer %s of this user', p_message_id);
    end if;
end
$$;

revoke all on function memory.mark_memories_used(bigint, uuid[], uuid) from public, anon, authenticated, service_role;
grant execute on function memory.mark_memories_used(bigint, uuid[], uuid) to authenticated, service_role;
