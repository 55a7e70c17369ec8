-- Why: a turn (question and answer) is stored atomically, both messages or neither, by one insert
-- of two rows: the table numbers the question's turn and joins the answer to it
-- (memory_private.assign_turn), and the statement's triggers run once for the turn, not once per
-- message. Its input is checked before anything is written.
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
    v_turn integer;
    v_ids bigint [];
    v_created timestamptz;
begin
    if p_user_id is not null then
        perform memory_private.check_acting_for(p_conversation_id, p_user_id);
    end if;
    -- Checked inline, as memory_private.check_text checks and says it: each of its calls costs a turn
    -- about 10 us, the search_path it sets on entry and resets on exit. JSON beyond the default is
    -- checked by the table (memory_private.check_message_row).
    if p_user_content is null or p_user_content !~ '[^[:space:]]' or length(p_user_content) > 100000 then
        perform memory_private.check_text('content', p_user_content, 100000);
    end if;
    if p_assistant_content is null or p_assistant_content !~ '[^[:space:]]' or length(p_assistant_content) > 100000 then
        perform memory_private.check_text('response', p_assistant_content, 100000);
    end if;
    if array_position(p_used_memory_ids, null) is not null then
        raise exception using errcode = '22023', message = 'a used memory id must not be null';
    end if;
    -- Rows are inserted in the order given: the question opens the turn, the answer joins it.
    with stored as (
        insert into memory.messages as m (
            conversation_id, role, content, metadata, author_id, tool_calls, suggested_values,
            suggested_actions, custom_payload, used_memory_ids
        ) values
        (p_conversation_id, 'user', p_user_content, coalesce(p_metadata, '{}'), p_author_id, null, null, null, null, '{}'),
        (
            p_conversation_id, 'assistant', p_assistant_content, coalesce(p_metadata, '{}'), null, p_tool_calls,
            p_suggested_values, p_suggested_actions, p_custom_payload, coalesce(p_used_memory_ids, '{}')
        )
        returning m.id, m.role, m.turn_number, m.created_at
    )
    select min(s.turn_number), array_agg(s.id order by s.role desc), min(s.created_at)
    into v_turn, v_ids, v_created
    from stored as s;
    return query select v_turn, v_ids[1], v_ids[2], v_created;
end
$$;

revoke all on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
