-- An import numbers the memories it adds after the user's count with one update of it (the table's
-- trigger updated the user's row once per memory); the trigger numbers only a memory given none.
set check_function_bodies = off;

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

    -- The records not there yet, numbered after the user's count in the order they were written:
    -- one update of the count for the whole import (the table's trigger would update it per row).
    with fresh as (
        select x.id as new_id, row_number() over (order by m.created_at, m.id) as k, m.*
        from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as m
        cross join lateral (select memory_private.import_id(v_user, m.id, true) as id) as x
        where not exists (select 1 from memory.memories as o where o.id = x.id)
    ),
    numbered as (
        update memory.users as u set memories_numbered = u.memories_numbered + (select count(*) from fresh)
        where u.id = v_user
        returning u.memories_numbered - (select count(*) from fresh) as base
    )
    insert into memory.memories (
        id, user_id, profile_id, content, type, category, confidence, context, origin_mode,
        source_conversation_id, source_message_id, turn_index, pinned, active, archived, deleted_at,
        expires_at, created_at, updated_at, last_referenced_at, reference_count, number
    )
    select m.new_id, v_user, memory_private.import_id(v_user, m.profile_id, false), m.content, m.type, m.category,
        coalesce(m.confidence, 0.8), coalesce(m.context, '{}'), m.origin_mode,
        (select c.id from memory.conversations as c where c.id = m.source_conversation_id and c.user_id = v_user),
        case when memory_private.memory_gate(v_user, m.source_message_id) is null then m.source_message_id end,
        m.turn_index, coalesce(m.pinned, false), coalesce(m.active, true) and m.superseded_by is null,
        coalesce(m.archived, false), m.deleted_at, m.expires_at, coalesce(m.created_at, now()),
        coalesce(m.updated_at, now()), m.last_referenced_at, coalesce(m.reference_count, 0), n.base + m.k
    from fresh as m
    cross join numbered as n
    order by m.k;
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

create or replace function memory_private.memory_defaults()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_reason text;
    v_message memory.messages;
begin
    -- Only the kit's functions insert memories; an import numbers its batch itself.
    if tg_op = 'INSERT' and new.number is null then
        -- The user's next number: the user's row, locked until commit, orders concurrent writers
        -- (who take it before any memory's: memory_private.lock_memory_writer).
        update memory.users as u set memories_numbered = u.memories_numbered + 1 where u.id = new.user_id
        returning u.memories_numbered into new.number;
    end if;
    -- Another user's row is RLS's to refuse (42501); resolve nothing more for it here. Cascades
    -- (an owner deleting a together conversation) run as postgres with the caller's claims.
    if (select auth.uid()) is not null and new.user_id is distinct from (select auth.uid()) then
        return new;
    end if;
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if new.source_message_id is not null
        and (tg_op = 'INSERT' or new.source_message_id is distinct from old.source_message_id) then
        v_reason := memory_private.memory_gate(new.user_id, new.source_message_id);
        if v_reason is not null then
            raise exception using errcode = '42501', message = 'memory not allowed: ' || v_reason;
        end if;
        select m.* into v_message from memory.messages as m where m.id = new.source_message_id;
        new.source_conversation_id := v_message.conversation_id;
        new.turn_index := v_message.turn_number;
        new.origin_mode := (select c.mode from memory.conversations as c where c.id = v_message.conversation_id);
    end if;
    new.profile_id := memory_private.memory_profile(new.user_id, new.source_message_id, new.profile_id);
    if new.profile_id is null then
        raise exception using errcode = '23502', message = 'memory needs a profile',
            hint = 'Create a primary profile for the user, or pass one.';
    end if;
    return new;
end
$function$;


revoke all on function memory_private.import_memories(jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.import_memories(jsonb, uuid) to service_role, authenticated;
revoke all on function memory_private.memory_defaults() from public, anon, authenticated, service_role;
