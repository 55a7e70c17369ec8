-- The checks of 20261127234902 to 20261128002614 look at what an update changes only, so a row
-- stored before a rule can still be renamed or erased; a message written directly (a participant
-- through the Data API) is checked when it carries JSON (memory_private.check_message_row), so it
-- cannot hold JSON nested past what a client reads; registering never moves a user of no tenant.
drop trigger if exists messages_checked on memory.messages;

drop function if exists memory_private.check_message_edit();

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
    perform memory_private.check_message_payloads(
        case when v_insert or new.tool_calls is distinct from old.tool_calls then new.tool_calls end,
        case when v_insert or new.suggested_values is distinct from old.suggested_values then new.suggested_values end,
        case when v_insert or new.suggested_actions is distinct from old.suggested_actions
            then new.suggested_actions end,
        case when v_insert or new.custom_payload is distinct from old.custom_payload then new.custom_payload end
    );
    return new;
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
$function$;

create or replace function memory.register_user(p_user_id uuid default null::uuid, p_tenant_id uuid default null::uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_id uuid := memory_private.acting_user(p_user_id);
begin
    -- Two statements: a signed-in user may insert only id and auth_user_id (column grants).
    if p_tenant_id is null then
        insert into memory.users (id, auth_user_id) values (v_id, v_id) on conflict do nothing;
    else
        insert into memory.users (id, auth_user_id, tenant_id) values (v_id, v_id, p_tenant_id) on conflict do nothing;
        if not found and exists (
            select 1 from memory.users as u where u.id = v_id and u.tenant_id is distinct from p_tenant_id
        ) then
            raise exception using errcode = '55000',
                message = format('user %s is registered in another tenant or in none', v_id),
                hint = 'Registering does not move a user: export their memories, erase the user, and import '
                || 'them for a user of the tenant.';
        end if;
    end if;
    return v_id;
end
$function$;

create or replace function memory_private.check_key_value()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    if tg_op = 'INSERT' or new.key is distinct from old.key then
        perform memory_private.check_text('key', new.key, 200);
    end if;
    if tg_op = 'INSERT' or new.value is distinct from old.value then
        perform memory_private.check_json('value', new.value, nullif(tg_argv[0], ''), 100000);
    end if;
    return new;
end
$function$;

create or replace function memory_private.check_profile()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    if tg_op = 'INSERT' or new.name is distinct from old.name then
        perform memory_private.check_text('name', new.name, 200);
    end if;
    if (tg_op = 'INSERT' or new.timezone is distinct from old.timezone)
        and not memory_private.is_time_zone(new.timezone) then
        raise exception using errcode = '22023', message = format('unknown time zone %L', new.timezone),
            hint = 'A time zone is an IANA name, such as Europe/Berlin or UTC.';
    end if;
    if tg_op = 'INSERT' or new.attributes is distinct from old.attributes then
        perform memory_private.check_json('attributes', new.attributes, 'object', 100000);
    end if;
    return new;
end
$function$;

create or replace function memory_private.check_state_mode()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    if tg_op = 'INSERT' or new.mode is distinct from old.mode then
        perform memory_private.check_text('mode', new.mode, 100);
    end if;
    return new;
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
    if tg_op = 'INSERT' or new.user_id is distinct from old.user_id or new.tenant_id is distinct from old.tenant_id then
        new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    end if;
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
    if (tg_op = 'INSERT' or new.mode is distinct from old.mode)
        and new.mode not in ('chat', 'astro', 'profile', 'together', 'swiss') then
        raise exception using errcode = '23514', message = format('unknown conversation mode %L', new.mode),
            hint = 'One of: chat, astro, profile, together, swiss';
    end if;
    if (tg_op = 'INSERT' or new.window_turns is distinct from old.window_turns) and new.window_turns <= 0 then
        raise exception using errcode = '23514', message = 'window_turns must be positive';
    end if;
    if new.title is not null and (tg_op = 'INSERT' or new.title is distinct from old.title) then
        perform memory_private.check_text('title', new.title, 500);
    end if;
    if tg_op = 'INSERT' or new.metadata is distinct from old.metadata then
        perform memory_private.check_json('metadata', new.metadata, 'object', 100000);
    end if;
    return new;
end
$function$;

create trigger messages_checked_on_insert before insert on memory.messages for each row when (
    (
        (new.metadata <> '{}'::jsonb)
        or (new.tool_calls is not null)
        or (new.suggested_values is not null)
        or (new.suggested_actions is not null)
        or (new.custom_payload is not null)
    )
) execute function memory_private.check_message_row();

create trigger messages_checked_on_update before update of content,
metadata,
tool_calls,
suggested_values,
suggested_actions,
custom_payload on memory.messages for each row execute function memory_private.check_message_row();


revoke all on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
revoke all on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
revoke all on function memory.register_user(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.register_user(uuid, uuid) to authenticated, service_role;
revoke all on function memory_private.check_key_value() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_message_row() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_profile() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_state_mode() from public, anon, authenticated, service_role;
revoke all on function memory_private.conversation_defaults() from public, anon, authenticated, service_role;
