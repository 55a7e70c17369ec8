-- A signed-in user learns nothing of other users' rows through the memory gate or an import: naming
-- another user's message as a memory's source reads as a missing message (it read "the user did
-- not write the source message", so message ids could be walked to learn which exist), and an
-- imported record whose id another user's row holds takes an id derived from the user and the old
-- one (the import answered 0 for such an id and 1 for a free one; a profile id held by another
-- user failed the import on a foreign key).

set check_function_bodies = off;

create or replace function memory_private.import_id(p_user_id uuid, p_id uuid, p_memory boolean)
returns uuid
language plpgsql
stable
set search_path to ''
as $function$
begin
    if p_memory and exists (select 1 from memory.memories as o where o.id = p_id and o.user_id <> p_user_id)
        or not p_memory and exists (
            select 1 from memory.profiles as o where o.id = p_id and o.user_id <> p_user_id
        ) then
        return md5(p_user_id::text || '/' || p_id::text)::uuid;
    end if;
    return p_id;
end
$function$;

create or replace function memory_private.gate_reason(p_user_id uuid, p_message_id bigint)
returns text
language plpgsql
stable security definer
set search_path to ''
as $function$
declare
    v_message memory.messages;
    v_conversation memory.conversations;
    v_profile_id uuid;
begin
    select m.* into v_message from memory.messages as m where m.id = p_message_id;
    if not found then
        return 'source message not found';
    end if;
    if coalesce(v_message.author_id, v_message.user_id) <> p_user_id or v_message.role <> 'user' then
        -- A message of a conversation the user takes no part in is not theirs to know of.
        if v_message.user_id <> p_user_id and not exists (
            select 1 from memory.participants as p
            where p.conversation_id = v_message.conversation_id and p.user_id = p_user_id
        ) then
            return 'source message not found';
        end if;
        return 'the user did not write the source message';
    end if;
    select c.* into v_conversation from memory.conversations as c where c.id = v_message.conversation_id;
    v_profile_id := case
        when v_conversation.user_id = p_user_id then v_conversation.profile_id
        else (select p.profile_id from memory.participants as p
              where p.conversation_id = v_conversation.id and p.user_id = p_user_id)
    end;
    if v_profile_id is null then
        return 'no profile is selected in the conversation';
    end if;
    if not exists (
        select 1 from memory.profiles as p where p.id = v_profile_id and p.user_id = p_user_id and p.is_primary
    ) then
        return 'the selected profile is not the user''s primary profile';
    end if;
    if not v_conversation.remember then
        return 'remember is off in this conversation';
    end if;
    if (select u.memory_paused from memory.users as u where u.id = p_user_id) then
        return 'the user has paused memory';
    end if;
    return null;
end
$function$;

create or replace function memory_private.import_memories(p_export jsonb, p_user_id uuid)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_scope uuid := memory_private.memory_scope();
    v_user uuid := memory_private.acting_user(coalesce(p_user_id, v_scope));
    v_added integer;
begin
    if v_scope is not null and v_user <> v_scope then
        raise exception using errcode = '42501', message = 'a signed-in user imports only for themselves';
    end if;
    if p_export ->> 'format' is distinct from 'supamem.memories' or (p_export ->> 'version')::integer <> 1 then
        raise exception using errcode = '22023', message = 'not a supamem memories export (format 1)';
    end if;
    insert into memory.profiles (id, user_id, name, is_primary, timezone, attributes, created_at)
    select x.id, v_user, p.name,
        p.is_primary and not exists (select 1 from memory.profiles as o where o.user_id = v_user and o.is_primary),
        p.timezone, p.attributes, p.created_at
    from jsonb_populate_recordset(null::memory.profiles, p_export -> 'profiles') as p
    cross join lateral (select memory_private.import_id(v_user, p.id, false) as id) as x
    where not exists (select 1 from memory.profiles as o where o.id = x.id);

    update memory.users as u
    set memory_paused = u.memory_paused or coalesce((p_export #>> '{settings,memory_paused}')::boolean, false),
        long_term_opt_in = coalesce((p_export #>> '{settings,long_term_opt_in}')::boolean, u.long_term_opt_in)
    where u.id = v_user;

    insert into memory.memories (
        id, user_id, profile_id, content, type, category, confidence, context, origin_mode,
        source_conversation_id, source_message_id, turn_index, pinned, active, archived, deleted_at,
        expires_at, created_at, updated_at, last_referenced_at, reference_count
    )
    select x.id, v_user, memory_private.import_id(v_user, m.profile_id, false), m.content, m.type, m.category,
        m.confidence, m.context, m.origin_mode,
        (select c.id from memory.conversations as c where c.id = m.source_conversation_id and c.user_id = v_user),
        case when memory_private.memory_gate(v_user, m.source_message_id) is null then m.source_message_id end,
        m.turn_index, m.pinned, m.active and m.superseded_by is null, m.archived, m.deleted_at,
        m.expires_at, m.created_at, coalesce(m.updated_at, now()), m.last_referenced_at, m.reference_count
    from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as m
    cross join lateral (select memory_private.import_id(v_user, m.id, true) as id) as x
    where not exists (select 1 from memory.memories as o where o.id = x.id)
    order by m.created_at, m.id;
    get diagnostics v_added = row_count;

    -- Successor links are restored once every record is back.
    update memory.memories as m set superseded_by = x.successor, active = false, updated_at = e.updated_at
    from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as e
    cross join lateral (
        select memory_private.import_id(v_user, e.id, true) as id,
            memory_private.import_id(v_user, e.superseded_by, true) as successor
    ) as x
    where m.id = x.id and m.user_id = v_user and e.superseded_by is not null and m.superseded_by is null
        and exists (select 1 from memory.memories as s where s.id = x.successor and s.user_id = v_user);
    perform memory_private.enforce_memory_cap(v_user, p.id) from memory.profiles as p where p.user_id = v_user;
    return v_added;
end
$function$;


revoke all on function memory_private.gate_reason(uuid, bigint) from public, anon, authenticated, service_role;
revoke all on function memory_private.import_id(uuid, uuid, boolean) from public, anon, authenticated, service_role;
revoke all on function memory_private.import_memories(jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.import_memories(jsonb, uuid) to service_role, authenticated;
