-- Why: the single entry point for writing one message; numbering, window, TTL and ownership are
-- enforced by the table (memory_private.assign_turn), so Data API inserts behave the same.
create function memory.add_message(
    p_conversation_id uuid,
    p_role text,
    p_content text,
    p_metadata jsonb default '{}',
    p_author_id uuid default null,
    p_tool_calls jsonb default null,
    p_suggested_values jsonb default null,
    p_suggested_actions jsonb default null,
    p_custom_payload jsonb default null,
    p_used_memory_ids uuid[] default '{}',
    p_user_id uuid default null
)
returns memory.messages
language plpgsql
set search_path = ''
as $$
declare
    v_message memory.messages;
begin
    if p_user_id is not null then
        perform memory_private.check_acting_for(p_conversation_id, p_user_id);
    end if;
    if p_role is null or p_role not in ('user', 'assistant') then
        raise exception using errcode = '22023', message = format('invalid role %L', p_role),
            hint = 'role must be ''user'' or ''assistant''';
    end if;
    perform memory_private.check_text('content', p_content, 100000);
    -- Memories used are an answer's (seed 004's metrics count the answers that used some).
    if p_role = 'user' and cardinality(p_used_memory_ids) > 0 then
        raise exception using errcode = '22023', message = 'only an answer uses memories';
    end if;
    if array_position(p_used_memory_ids, null) is not null then
        raise exception using errcode = '22023', message = 'a used memory id must not be null';
    end if;
    insert into memory.messages (
        conversation_id, role, content, metadata, author_id, tool_calls, suggested_values,
        suggested_actions, custom_payload, used_memory_ids
    ) values (
        p_conversation_id, p_role, p_content, coalesce(p_metadata, '{}'), p_author_id, p_tool_calls,
        p_suggested_values, p_suggested_actions, p_custom_payload, coalesce(p_used_memory_ids, '{}')
    )
    returning * into v_message;
    return v_message;
end
$$;

revoke all on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
