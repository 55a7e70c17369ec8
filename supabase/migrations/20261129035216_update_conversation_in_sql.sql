-- memory.update_conversation: seed 002's update_conversation in one statement, what may change and
-- whose conversation it is checked in SQL instead of by the Python client.
set check_function_bodies = off;

create or replace function memory.update_conversation(
    p_conversation_id uuid, p_changes jsonb, p_user_id uuid default null::uuid
)
returns memory.conversations
language plpgsql
set search_path to ''
as $function$
declare
    v_unknown text;
    v_row memory.conversations;
begin
    if p_changes is null or jsonb_typeof(p_changes) <> 'object' then
        raise exception using errcode = '22023', message = 'the changes must be a JSON object';
    end if;
    select string_agg(k, ', ' order by k) into v_unknown
    from jsonb_object_keys(p_changes) as k
    where k not in ('title', 'archived', 'remember', 'profile_id', 'mode', 'metadata');
    if v_unknown is not null then
        raise exception using errcode = '22023',
            message = format('cannot update %s: only title, archived, remember, profile_id, mode, metadata', v_unknown);
    end if;
    if jsonb_typeof(p_changes -> 'archived') is distinct from 'boolean' and p_changes ? 'archived'
        or jsonb_typeof(p_changes -> 'remember') is distinct from 'boolean' and p_changes ? 'remember' then
        raise exception using errcode = '22023', message = 'archived and remember are true or false';
    end if;
    if jsonb_typeof(p_changes -> 'title') not in ('string', 'null')
        or jsonb_typeof(p_changes -> 'mode') <> 'string' then
        raise exception using errcode = '22023', message = 'title is text or null, and mode is text';
    end if;
    if jsonb_typeof(p_changes -> 'profile_id') not in ('string', 'null')
        or p_changes ->> 'profile_id' !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        raise exception using errcode = '22023', message = 'profile_id is a profile''s id or null';
    end if;
    update memory.conversations as c
    set title = case when p_changes ? 'title' then p_changes ->> 'title' else c.title end,
        archived = case when p_changes ? 'archived' then (p_changes ->> 'archived')::boolean else c.archived end,
        remember = case when p_changes ? 'remember' then (p_changes ->> 'remember')::boolean else c.remember end,
        profile_id = case when p_changes ? 'profile_id' then (p_changes ->> 'profile_id')::uuid else c.profile_id end,
        mode = case when p_changes ? 'mode' then p_changes ->> 'mode' else c.mode end,
        metadata = case when p_changes ? 'metadata' then p_changes -> 'metadata' else c.metadata end
    where c.id = p_conversation_id and (p_user_id is null or c.user_id = p_user_id)
    returning c.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'conversation not found';
    end if;
    return v_row;
end
$function$;

revoke all on function memory.update_conversation(uuid, jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.update_conversation(uuid, jsonb, uuid) to authenticated, service_role;
