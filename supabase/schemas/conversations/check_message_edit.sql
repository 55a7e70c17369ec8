-- Why: a message is edited through the Data API too (a signed-in owner may update its metadata), and
-- the table's checks refuse a bad edit by naming a constraint: this trigger says what is wrong
-- (22023) and holds the edit to the writers' JSON limits, as add_turn and add_message hold a new
-- message.
create function memory_private.check_message_edit()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.check_text('content', new.content, 100000);
    perform memory_private.check_json('metadata', new.metadata, 'object', 100000);
    perform memory_private.check_message_payloads(
        new.tool_calls, new.suggested_values, new.suggested_actions, new.custom_payload
    );
    return new;
end
$$;

revoke all on function memory_private.check_message_edit() from public, anon, authenticated, service_role;

create trigger messages_checked
before update of content, metadata, tool_calls, suggested_values, suggested_actions, custom_payload
on memory.messages
for each row execute function memory_private.check_message_edit();
