-- An edit of a message (its text, metadata or payloads; through the Data API too) is checked as a
-- new message is: what is wrong is said (22023), and its JSON nests at most 64 levels deep.
set check_function_bodies = off;

create or replace function memory_private.check_message_edit()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    perform memory_private.check_text('content', new.content, 100000);
    perform memory_private.check_json('metadata', new.metadata, 'object', 100000);
    perform memory_private.check_message_payloads(
        new.tool_calls, new.suggested_values, new.suggested_actions, new.custom_payload
    );
    return new;
end
$function$;

create trigger messages_checked before update of content,
metadata,
tool_calls,
suggested_values,
suggested_actions,
custom_payload on memory.messages for each row execute function memory_private.check_message_edit();


revoke all on function memory_private.check_message_edit() from public, anon, authenticated, service_role;
