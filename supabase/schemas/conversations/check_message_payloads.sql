-- Why: a message's structured parts, checked as the table checks them (messages_tool_calls_size
-- and the rest), by the writers that take them, so a refusal says which part is wrong.
create function memory_private.check_message_payloads(
    p_tool_calls jsonb, p_suggested_values jsonb, p_suggested_actions jsonb, p_custom_payload jsonb
)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    if p_tool_calls is not null then
        perform memory_private.check_json('tool_calls', p_tool_calls, 'array', 1000000);
    end if;
    perform memory_private.check_json('suggested_values', p_suggested_values, null, 100000);
    perform memory_private.check_json('suggested_actions', p_suggested_actions, null, 100000);
    perform memory_private.check_json('custom_payload', p_custom_payload, null, 100000);
end
$$;

revoke all on function memory_private.check_message_payloads(jsonb, jsonb, jsonb, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_message_payloads(jsonb, jsonb, jsonb, jsonb)
to authenticated, service_role;
