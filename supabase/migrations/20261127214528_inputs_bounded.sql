-- Times, durations and counters a caller sends are bounded where a client could not read them back
-- or the next write would overflow: a memory's expiry (in the future, at most 100 years away), a
-- conversation's or short-term ttl (at most 100 years), an import's records (read as rows first,
-- each bad one named: wrong types, missing fields, times from 1970 to now, counts to 1,000,000);
-- a memory's reference count saturates.

set check_function_bodies = off;

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
    v_user uuid := memory_private.acting_user(coalesce(p_user_id, v_scope));
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
        select format('profile %s: %s', p.id, case
            when p.id is null then 'an id is required'
            when not p.created_at between '1970-01-01' and now() + interval '1 day' then 'created_at out of range'
        end)
        into v_bad
        from jsonb_populate_recordset(null::memory.profiles, p_export -> 'profiles') as p
        where p.id is null or not p.created_at between '1970-01-01' and now() + interval '1 day'
        limit 1;
        select coalesce(v_bad, format('memory %s: %s', m.id, case
            when m.id is null or m.profile_id is null or m.content is null or m.type is null
                then 'id, profile_id, content and type are required'
            when not m.confidence between 0 and 1 then 'confidence out of range (0..1)'
            when not m.reference_count between 0 and 1000000 then 'reference_count out of range (0..1,000,000)'
            when pg_catalog.length(m.origin_mode) > 100 then 'origin_mode longer than 100 characters'
            when not m.expires_at between '1970-01-01' and now() + interval '100 years' then 'expires_at out of range'
            else 'a time out of range (from 1970 to now)'
        end))
        into v_bad
        from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as m
        where m.id is null or m.profile_id is null or m.content is null or m.type is null
            or not m.confidence between 0 and 1 or not m.reference_count between 0 and 1000000
            or pg_catalog.length(m.origin_mode) > 100
            or not m.expires_at between '1970-01-01' and now() + interval '100 years'
            or not m.created_at between '1970-01-01' and now() + interval '1 day'
            or not m.updated_at between '1970-01-01' and now() + interval '1 day'
            or not m.last_referenced_at between '1970-01-01' and now() + interval '1 day'
            or not m.deleted_at between '1970-01-01' and now() + interval '1 day'
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

create or replace function memory_private.reinforce(
    p_memory_ids uuid[], p_confidence numeric default null::numeric, p_user_id uuid default null::uuid
)
returns void
language plpgsql
security definer
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
begin
    update memory.memories as m
    -- Saturated: a counter at the integer's top must not make every later use fail.
    set reference_count = least(m.reference_count, 2147483646) + 1,
        last_referenced_at = now(),
        confidence = greatest(m.confidence, coalesce(p_confidence, m.confidence))
    where m.id = any(p_memory_ids) and m.user_id = coalesce((select auth.uid()), m.user_id)
        and (p_user_id is null or m.user_id = p_user_id);
end
$function$;

create or replace function memory_private.remember(
    p_content text,
    p_type text,
    p_user_id uuid,
    p_profile_id uuid,
    p_category text,
    p_confidence numeric,
    p_context jsonb,
    p_source_message_id bigint,
    p_pinned boolean,
    p_expires_at timestamp with time zone
)
returns table (memory_id uuid, outcome text)
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_scope uuid := memory_private.memory_scope();
    v_user uuid;
    v_profile uuid;
    v_reason text;
    v_existing uuid;
    v_threshold text;
begin
    if v_scope is not null and p_user_id is distinct from v_scope and p_user_id is not null then
        raise exception using errcode = '42501', message = 'a signed-in user remembers only for themselves';
    end if;
    v_user := memory_private.writing_user(coalesce(p_user_id, v_scope));
    -- Stored, a time past the year 9999 could not be read back by a client, and one already past
    -- would be a memory added and never seen.
    if p_expires_at <= now() or p_expires_at > now() + interval '100 years' then
        raise exception using errcode = '22023', message = 'a memory expires in the future, at most 100 years away';
    end if;
    if p_source_message_id is not null then
        v_reason := memory_private.memory_gate(v_user, p_source_message_id);
        if v_reason is not null then
            raise exception using errcode = '42501', message = 'memory not allowed: ' || v_reason;
        end if;
    end if;
    v_profile := memory_private.memory_profile(v_user, p_source_message_id, p_profile_id);
    perform pg_advisory_xact_lock(hashtextextended('supamem.memories:' || v_user::text || coalesce(v_profile::text, ''), 0));
    -- The % operator at the dedup threshold lets the trigram index find candidates, instead of
    -- computing the similarity of every live memory of the profile (restored afterwards).
    v_threshold := coalesce(current_setting('pg_trgm.similarity_threshold', true), '0.3');
    perform set_config('pg_trgm.similarity_threshold', memory_private.setting('dedup_threshold') #>> '{}', true);
    select m.id into v_existing
    from memory.memories as m
    where m.user_id = v_user and m.profile_id = v_profile
        and m.active and not m.archived and m.deleted_at is null
        and (m.expires_at is null or m.expires_at > now())
        and m.content operator(extensions.%) p_content
    order by extensions.similarity(m.content, p_content) desc, m.id
    limit 1;
    perform set_config('pg_trgm.similarity_threshold', v_threshold, true);
    if v_existing is not null then
        perform memory_private.reinforce(array[v_existing], coalesce(p_confidence, 0.8));
        return query select v_existing, 'duplicate'::text;
        return;
    end if;
    insert into memory.memories (
        user_id, profile_id, content, type, category, confidence, context, source_message_id, pinned, expires_at
    ) values (
        v_user, v_profile, p_content, p_type, p_category, coalesce(p_confidence, 0.8), coalesce(p_context, '{}'),
        p_source_message_id, coalesce(p_pinned, false), p_expires_at
    )
    returning id into v_existing;
    perform memory_private.enforce_memory_cap(v_user, v_profile);
    -- With every other live memory pinned, the cap makes room by archiving the newcomer itself.
    return query select v_existing, case when (select m.archived from memory.memories as m where m.id = v_existing)
        then 'archived: memory cap reached' else 'added' end;
end
$function$;


revoke all on function memory.short_term_set(text, jsonb, interval, uuid) from public,
anon,
authenticated,
service_role;
grant execute on function memory.short_term_set(text, jsonb, interval, uuid) to authenticated, service_role;
revoke all on function memory_private.conversation_defaults() from public, anon, authenticated, service_role;
revoke all on function memory_private.import_memories(jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.import_memories(jsonb, uuid) to service_role, authenticated;
revoke all on function memory_private.reinforce(uuid[], numeric, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.reinforce(uuid[], numeric, uuid) to authenticated, service_role;
revoke all on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
from public, anon, authenticated, service_role;
grant execute on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
to authenticated, service_role;
