-- The writers say what is wrong with their input (22023, or 23514 from a conversation's checks)
-- where the tables' refusals named only a constraint: a message's length and its metadata's and
-- payloads' type and size, a key-value key and value, a state's mode, and a conversation's mode,
-- window, title and metadata on every way in.
drop trigger if exists conversations_defaults on memory.conversations;

set check_function_bodies = off;

create or replace function memory_private.check_json(p_what text, p_value jsonb, p_type text, p_max_bytes integer)
returns void
language plpgsql
immutable
set search_path to ''
as $function$
begin
    if p_type is not null and jsonb_typeof(p_value) is distinct from p_type then
        raise exception using errcode = '22023', message = format(
            '%s must be a JSON %s, not %s', p_what, p_type, coalesce(jsonb_typeof(p_value), 'missing')
        );
    end if;
    if octet_length(p_value::text) > p_max_bytes then
        raise exception using errcode = '22023',
            message = format('%s must be at most %s bytes as JSON text', p_what, p_max_bytes);
    end if;
end
$function$;

create or replace function memory_private.check_message_payloads(
    p_tool_calls jsonb, p_suggested_values jsonb, p_suggested_actions jsonb, p_custom_payload jsonb
)
returns void
language plpgsql
immutable
set search_path to ''
as $function$
begin
    if p_tool_calls is not null then
        perform memory_private.check_json('tool_calls', p_tool_calls, 'array', 1000000);
    end if;
    perform memory_private.check_json('suggested_values', p_suggested_values, null, 100000);
    perform memory_private.check_json('suggested_actions', p_suggested_actions, null, 100000);
    perform memory_private.check_json('custom_payload', p_custom_payload, null, 100000);
end
$function$;

create or replace function memory_private.check_text(p_what text, p_value text, p_max integer)
returns void
language plpgsql
immutable
set search_path to ''
as $function$
begin
    if p_value is null or p_value !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = format('%s must not be empty', p_what);
    end if;
    if length(p_value) > p_max then
        raise exception using errcode = '22023', message = format('%s must be at most %s characters', p_what, p_max);
    end if;
end
$function$;

create or replace function memory.add_message(
    p_conversation_id uuid,
    p_role text,
    p_content text,
    p_metadata jsonb default '{}'::jsonb,
    p_author_id uuid default null::uuid,
    p_tool_calls jsonb default null::jsonb,
    p_suggested_values jsonb default null::jsonb,
    p_suggested_actions jsonb default null::jsonb,
    p_custom_payload jsonb default null::jsonb,
    p_used_memory_ids uuid[] default '{}'::uuid[],
    p_user_id uuid default null::uuid
)
returns memory.messages
language plpgsql
set search_path to ''
as $function$
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
    perform memory_private.check_json('metadata', coalesce(p_metadata, '{}'), 'object', 100000);
    if coalesce(p_tool_calls, p_suggested_values, p_suggested_actions, p_custom_payload) is not null then
        perform memory_private.check_message_payloads(
            p_tool_calls, p_suggested_values, p_suggested_actions, p_custom_payload
        );
    end if;
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
$function$;

create or replace function memory.add_turn(
    p_conversation_id uuid,
    p_user_content text,
    p_assistant_content text,
    p_metadata jsonb default '{}'::jsonb,
    p_author_id uuid default null::uuid,
    p_tool_calls jsonb default null::jsonb,
    p_suggested_values jsonb default null::jsonb,
    p_suggested_actions jsonb default null::jsonb,
    p_custom_payload jsonb default null::jsonb,
    p_used_memory_ids uuid[] default '{}'::uuid[],
    p_user_id uuid default null::uuid
)
returns table (
    turn_number integer, user_message_id bigint, assistant_message_id bigint, created_at timestamp with time zone
)
language plpgsql
set search_path to ''
as $function$
declare
    v_turn integer;
    v_ids bigint [];
    v_created timestamptz;
begin
    if p_user_id is not null then
        perform memory_private.check_acting_for(p_conversation_id, p_user_id);
    end if;
    -- Checked inline, as memory_private.check_text and check_json check and say it: each call of
    -- theirs costs a turn about 10 us, the search_path it sets on entry and resets on exit.
    if p_user_content is null or p_user_content !~ '[^[:space:]]' or length(p_user_content) > 100000 then
        perform memory_private.check_text('content', p_user_content, 100000);
    end if;
    if p_assistant_content is null or p_assistant_content !~ '[^[:space:]]' or length(p_assistant_content) > 100000 then
        perform memory_private.check_text('response', p_assistant_content, 100000);
    end if;
    if p_metadata is not null and p_metadata <> '{}' then
        perform memory_private.check_json('metadata', p_metadata, 'object', 100000);
    end if;
    if coalesce(p_tool_calls, p_suggested_values, p_suggested_actions, p_custom_payload) is not null then
        perform memory_private.check_message_payloads(
            p_tool_calls, p_suggested_values, p_suggested_actions, p_custom_payload
        );
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
$function$;

create or replace function memory.kv_set(p_key text, p_value jsonb, p_user_id uuid default null::uuid)
returns memory.user_kv
language plpgsql
set search_path to ''
as $function$
declare
    v_row memory.user_kv;
begin
    perform memory_private.check_text('key', p_key, 200);
    perform memory_private.check_json('value', p_value, 'object', 100000);
    insert into memory.user_kv as k (user_id, key, value)
    values (memory_private.writing_user(p_user_id), p_key, p_value)
    on conflict (user_id, key) do update set value = excluded.value, updated_at = now()
    returning k.* into v_row;
    return v_row;
end
$function$;

create or replace function memory.short_term_set(
    p_key text, p_value jsonb, p_ttl interval default null::interval, p_user_id uuid default null::uuid
)
returns memory.short_term_state
language plpgsql
set search_path to ''
as $function$
declare
    v_ttl interval := coalesce(p_ttl, (memory_private.setting('short_term_ttl') #>> '{}')::interval);
    v_row memory.short_term_state;
begin
    perform memory_private.check_text('key', p_key, 200);
    perform memory_private.check_json('value', p_value, null, 100000);
    if v_ttl <= interval '0' or v_ttl > interval '100 years' then
        raise exception using errcode = '22023', message = 'ttl must be positive and at most 100 years';
    end if;
    insert into memory.short_term_state (user_id, key, value, expires_at)
    values (memory_private.writing_user(p_user_id), p_key, p_value, now() + v_ttl)
    on conflict (user_id, key) do update
    set value = excluded.value, expires_at = excluded.expires_at, updated_at = now()
    returning * into v_row;
    return v_row;
end
$function$;

create or replace function memory.state_set(p_mode text, p_user_id uuid default null::uuid)
returns memory.user_state
language plpgsql
set search_path to ''
as $function$
declare
    v_row memory.user_state;
begin
    perform memory_private.check_text('mode', p_mode, 100);
    insert into memory.user_state as s (user_id, mode)
    values (memory_private.writing_user(p_user_id), p_mode)
    on conflict (user_id) do update set mode = excluded.mode, updated_at = now()
    returning s.* into v_row;
    return v_row;
end
$function$;

create or replace function memory_private.conversation_defaults()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_tenant memory.tenants;
begin
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if tg_op = 'INSERT' then
        select t.* into v_tenant from memory.tenants as t where t.id = new.tenant_id;
        new.remember := coalesce(new.remember, new.mode <> 'swiss');
        new.ttl := coalesce(
            new.ttl, v_tenant.conversation_ttl, (memory_private.setting('conversation_ttl') #>> '{}')::interval
        );
        new.window_turns := coalesce(
            new.window_turns, v_tenant.conversation_window, (memory_private.setting('conversation_window') #>> '{}')::integer
        );
        -- Bounded above too: messages expire at created_at + ttl, and past the year 9999 a time
        -- cannot be read back by a client.
        if new.ttl <= interval '0' or new.ttl > interval '100 years' then
            raise exception using errcode = '23514', message = 'ttl must be positive and at most 100 years';
        end if;
        new.expires_at := new.created_at + new.ttl;
    end if;
    -- The table's checks of these name only their constraint: say what is wrong.
    if new.mode not in ('chat', 'astro', 'profile', 'together', 'swiss') then
        raise exception using errcode = '23514', message = format('unknown conversation mode %L', new.mode),
            hint = 'One of: chat, astro, profile, together, swiss';
    end if;
    if new.window_turns <= 0 then
        raise exception using errcode = '23514', message = 'window_turns must be positive';
    end if;
    if new.title is not null then
        perform memory_private.check_text('title', new.title, 500);
    end if;
    perform memory_private.check_json('metadata', new.metadata, 'object', 100000);
    return new;
end
$function$;

create trigger conversations_defaults before insert or update of user_id,
tenant_id,
title,
mode,
metadata,
window_turns on memory.conversations for each row execute function memory_private.conversation_defaults();


revoke all on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
revoke all on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
revoke all on function memory.kv_set(text, jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.kv_set(text, jsonb, uuid) to authenticated, service_role;
revoke all on function memory.short_term_set(text, jsonb, interval, uuid) from public,
anon,
authenticated,
service_role;
grant execute on function memory.short_term_set(text, jsonb, interval, uuid) to authenticated, service_role;
revoke all on function memory.state_set(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.state_set(text, uuid) to authenticated, service_role;
revoke all on function memory_private.check_json(text, jsonb, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_json(text, jsonb, text, integer) to authenticated, service_role;
revoke all on function memory_private.check_message_payloads(jsonb, jsonb, jsonb, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_message_payloads(jsonb, jsonb, jsonb, jsonb) to authenticated,
service_role;
revoke all on function memory_private.check_text(text, text, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_text(text, text, integer) to authenticated, service_role;
revoke all on function memory_private.conversation_defaults() from public, anon, authenticated, service_role;
