-- add_message and add_turn call the acting-for check only when a user is named, so a write that
-- names none pays no call; the unfold trigger drops a test on search, which is never null.
set check_function_bodies = off;

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
    if p_content is null or p_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'content must not be empty';
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
    if p_user_content is null or p_user_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'content must not be empty';
    end if;
    if p_assistant_content is null or p_assistant_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'response must not be empty';
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

create or replace function memory_private.check_acting_for(p_conversation_id uuid, p_user_id uuid)
returns void
language plpgsql
stable
set search_path to ''
as $function$
begin
    if not exists (
        select 1 from memory.conversations as c where c.id = p_conversation_id and c.user_id = p_user_id
    ) then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s of user %s', p_conversation_id, p_user_id);
    end if;
end
$function$;

create or replace function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    insert into memory_private.search_unfolds (user_id, search)
    select o.user_id, o.search
    from old_messages as o
    where o.id <= (select f.through from memory_private.message_scans as f where f.name = 'search_terms')
        -- An erased user's statistics went with the user.
        and exists (select 1 from memory.users as u where u.id = o.user_id);
    return null;
end
$function$;


revoke all on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_message(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
revoke all on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.add_turn(uuid, text, text, jsonb, uuid, jsonb, jsonb, jsonb, jsonb, uuid[], uuid)
to authenticated, service_role;
revoke all on function memory_private.check_acting_for(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_acting_for(uuid, uuid) to authenticated, service_role;
revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;
