-- Why: a turn (question and answer) is stored atomically: both messages or neither.
create function memory.add_turn(
    p_conversation_id uuid,
    p_user_content text,
    p_assistant_content text,
    p_metadata jsonb default '{}',
    p_author_id uuid default null,
    p_tool_calls jsonb default null,
    p_suggested_values jsonb default null,
    p_suggested_actions jsonb default null,
    p_custom_payload jsonb default null,
    p_used_memory_ids uuid[] default '{}',
    p_user_id uuid default null
)
returns table (turn_number integer, user_message_id bigint, assistant_message_id bigint, created_at timestamptz)
language plpgsql
set search_path = ''
as $$
declare
    v_question memory.messages;
    v_answer memory.messages;
begin
    v_question := memory.add_message(
        p_conversation_id, 'user', p_user_content, p_metadata, p_author_id, p_user_id => p_user_id
    );
    if p_assistant_content is null or p_assistant_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'response must not be empty';
    end if;
    v_answer := memory.add_message(
        p_conversation_id, 'assistant', p_assistant_content, p_metadata, null, p_tool_calls,
        p_suggested_values, p_suggested_actions, p_custom_payload, p_used_memory_ids
    );
    return query select v_question.turn_number, v_question.id, v_answer.id, v_question.created_at;
end
$$;

revoke all on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
