-- A message row's JSON is checked by memory_private.check_message_row alone: the payload helper it
-- called (its one caller since add_turn and add_message left JSON to the table) is folded into it.
drop function if exists memory_private.check_message_payloads(
    p_tool_calls jsonb, p_suggested_values jsonb, p_suggested_actions jsonb, p_custom_payload jsonb
);

set check_function_bodies = off;

create or replace function memory_private.check_message_row()
returns trigger
language plpgsql
set search_path to ''
as $function$
declare
    v_insert boolean := tg_op = 'INSERT';
begin
    if v_insert or new.content is distinct from old.content then
        perform memory_private.check_text('content', new.content, 100000);
    end if;
    if v_insert or new.metadata is distinct from old.metadata then
        perform memory_private.check_json('metadata', new.metadata, 'object', 100000);
    end if;
    -- Tool calls carry a tool's input and output (seed 002), so they get the most room.
    if new.tool_calls is not null and (v_insert or new.tool_calls is distinct from old.tool_calls) then
        perform memory_private.check_json('tool_calls', new.tool_calls, 'array', 1000000);
    end if;
    if v_insert or new.suggested_values is distinct from old.suggested_values then
        perform memory_private.check_json('suggested_values', new.suggested_values, null, 100000);
    end if;
    if v_insert or new.suggested_actions is distinct from old.suggested_actions then
        perform memory_private.check_json('suggested_actions', new.suggested_actions, null, 100000);
    end if;
    if v_insert or new.custom_payload is distinct from old.custom_payload then
        perform memory_private.check_json('custom_payload', new.custom_payload, null, 100000);
    end if;
    return new;
end
$function$;


revoke all on function memory_private.check_message_row() from public, anon, authenticated, service_role;
