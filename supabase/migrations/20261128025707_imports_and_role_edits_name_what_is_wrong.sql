-- An import of memories resolves its user as the other writers do: a signed-in user's first import
-- registers them, the service role's for a user nobody registered is not found (P0002), where the
-- foreign key refused it; an edit of a message's role is checked as an insert's is (22023).
drop trigger if exists messages_checked_on_update on memory.messages;

set check_function_bodies = off;

create or replace function memory_private.check_message_row()
returns trigger
language plpgsql
set search_path to ''
as $function$
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
$function$;

create or replace function memory_private.import_memories(p_export jsonb, p_user_id uuid)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_scope uuid := memory_private.memory_scope();
    -- A signed-in user's first import registers them; the service role's for nobody is not found.
    v_user uuid := memory_private.writing_user(coalesce(p_user_id, v_scope));
    v_added integer;
    v_bad text;
begin
    if v_scope is not null and v_user <> v_scope then
        raise exception using errcode = '42501', message = 'a signed-in user imports only for themselves';
    end if;
    if p_export ->> 'format' is distinct from 'supamem.memories' or p_export -> 'version' is distinct from '1' then
        raise exception using errcode = '22023', message = 'not a supamem memories export (format 1)';
    end if;
    -- Every record is read as a row of its table before anything is written: a value of the wrong
    -- type, a required field missing, a time a client could not read back (or a creation still to
    -- come), or a counter that the next use would overflow refuses the import, the record named.
    begin
        select format('profile %s: %s', p.id, f.fault) into v_bad
        from jsonb_populate_recordset(null::memory.profiles, p_export -> 'profiles') as p
        cross join lateral (select case
            when p.id is null then 'an id is required'
            when not p.created_at between '1970-01-01' and now() + interval '1 day' then 'created_at out of range'
        end as fault) as f
        where f.fault is not null
        limit 1;
        select coalesce(v_bad, format('memory %s: %s', m.id, f.fault)) into v_bad
        from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as m
        cross join lateral (select case
            when m.id is null or m.profile_id is null or m.content is null or m.type is null
                then 'id, profile_id, content and type are required'
            when not m.confidence between 0 and 1 then 'confidence out of range (0..1)'
            when not m.reference_count between 0 and 1000000 then 'reference_count out of range (0..1,000,000)'
            when pg_catalog.length(m.origin_mode) > 100 then 'origin_mode longer than 100 characters'
            when not m.expires_at between '1970-01-01' and now() + interval '100 years' then 'expires_at out of range'
            when exists (
                select 1 from unnest(array[m.created_at, m.updated_at, m.last_referenced_at, m.deleted_at]) as t (at)
                where not t.at between '1970-01-01' and now() + interval '1 day'
            ) then 'a time out of range (from 1970 to now)'
        end as fault) as f
        where f.fault is not null
        limit 1;
    exception when data_exception then
        raise exception using errcode = '22023', message = 'not a valid supamem memories export: ' || sqlerrm;
    end;
    if v_bad is not null then
        raise exception using errcode = '22023', message = 'not a valid supamem memories export: ' || v_bad;
    end if;
    insert into memory.profiles (id, user_id, name, is_primary, timezone, attributes, created_at)
    select x.id, v_user, p.name,
        coalesce(p.is_primary, false)
        and not exists (select 1 from memory.profiles as o where o.user_id = v_user and o.is_primary),
        coalesce(p.timezone, 'UTC'), coalesce(p.attributes, '{}'), coalesce(p.created_at, now())
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
        coalesce(m.confidence, 0.8), coalesce(m.context, '{}'), m.origin_mode,
        (select c.id from memory.conversations as c where c.id = m.source_conversation_id and c.user_id = v_user),
        case when memory_private.memory_gate(v_user, m.source_message_id) is null then m.source_message_id end,
        m.turn_index, coalesce(m.pinned, false), coalesce(m.active, true) and m.superseded_by is null,
        coalesce(m.archived, false), m.deleted_at, m.expires_at, coalesce(m.created_at, now()),
        coalesce(m.updated_at, now()), m.last_referenced_at, coalesce(m.reference_count, 0)
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

create trigger messages_checked_on_update before update of role,
content,
metadata,
tool_calls,
suggested_values,
suggested_actions,
custom_payload on memory.messages for each row execute function memory_private.check_message_row();


revoke all on function memory_private.check_message_row() from public, anon, authenticated, service_role;
revoke all on function memory_private.import_memories(jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.import_memories(jsonb, uuid) to service_role, authenticated;
