-- Why: a message is written and edited through the Data API too (a participant may insert into a
-- shared conversation, an owner may update a message's metadata), and the table's checks refuse a
-- bad row by naming a constraint and let JSON nest as deep as it likes: nested past what a client
-- parses (pydantic stops at 200 levels, and at 255 when it writes the answer), a row fails every
-- read of its conversation, for everyone in it. This trigger says what is wrong (22023) and holds
-- the JSON to the writers' limits. An update checks only what it changes.
create function memory_private.check_message_row()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
    v_insert boolean := tg_op = 'INSERT';
begin
    if (v_insert or new.role is distinct from old.role) and new.role not in ('user', 'assistant') then
        raise exception using errcode = '22023', message = format('invalid role %L', new.role),
            hint = 'A message is the user''s or the assistant''s.';
    end if;
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
$$;

revoke all on function memory_private.check_message_row() from public, anon, authenticated, service_role;

-- A new message is checked here only when it carries JSON beyond the default or its role or text
-- would be refused (a direct insert: add_turn and add_message check their own): a turn's plain
-- messages cost no call.
create trigger messages_checked_on_insert
before insert on memory.messages
for each row when (
    new.metadata <> '{}'::jsonb or new.tool_calls is not null or new.suggested_values is not null
    or new.suggested_actions is not null or new.custom_payload is not null
    or new.role not in ('user', 'assistant') or new.content !~ '[^[:space:]]' or length(new.content) > 100000
)
execute function memory_private.check_message_row();

create trigger messages_checked_on_update
before update of role, content, metadata, tool_calls, suggested_values, suggested_actions, custom_payload
on memory.messages
for each row execute function memory_private.check_message_row();
