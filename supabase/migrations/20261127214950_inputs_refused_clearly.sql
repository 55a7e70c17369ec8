-- Inputs refused with a clear 22023 where they failed with an internal error or were stored wrong:
-- an external user id past 255 characters (an index overflow read as 54000, "retry later"), a
-- query embedding too long for half precision (a cast error), a null used memory id, and used
-- memories on a question.

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
    if p_user_content is null or p_user_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'content must not be empty';
    end if;
    if p_assistant_content is null or p_assistant_content !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'response must not be empty';
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

create or replace function memory.user_id_for(p_external_id text, p_tenant_id uuid default null::uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_id uuid;
begin
    if p_external_id is null or p_external_id !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'external user id must not be empty';
    end if;
    -- Longer, its index entry overflowed (54000, which reads as a limit to retry later).
    if length(p_external_id) > 255 then
        raise exception using errcode = '22023', message = 'external user id must be at most 255 characters';
    end if;
    insert into memory.users (tenant_id, external_id)
    values (p_tenant_id, p_external_id)
    on conflict (tenant_id, external_id) where external_id is not null do nothing
    returning id into v_id;
    if v_id is null then
        select u.id into v_id
        from memory.users as u
        where u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id;
    end if;
    return v_id;
end
$function$;

create or replace function memory_private.check_query_embedding(p_embedding extensions.vector)
returns integer
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_dimensions integer := (memory_private.setting('embedding_dimensions'))::integer;
begin
    if p_embedding is not null and extensions.vector_dims(p_embedding) <> v_dimensions then
        raise exception using errcode = '22023',
            message = format(
                'the query embedding has %s dimensions; the embedding model %s has %s',
                extensions.vector_dims(p_embedding), memory_private.setting('embedding_model') ->> 0, v_dimensions
            );
    end if;
    if extensions.vector_norm(p_embedding) = 0 then
        raise exception using errcode = '22023', message = 'the query embedding is all zeros: it has no direction';
    end if;
    -- Vectors are searched in half precision, whose values end at 65,504: a longer query (a model's
    -- are about 1 long) failed in the cast.
    if extensions.vector_norm(p_embedding) > 65504 then
        raise exception using errcode = '22023',
            message = 'the query embedding is longer than 65,504: its values do not fit half precision';
    end if;
    return v_dimensions;
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
revoke all on function memory.user_id_for(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.user_id_for(text, uuid) to service_role;
revoke all on function memory_private.check_query_embedding(extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_query_embedding(extensions.vector) to authenticated, service_role;
