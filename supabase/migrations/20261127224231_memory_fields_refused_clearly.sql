-- A memory's writers check its type, category and confidence first (memory_private.check_memory_fields,
-- 22023 saying what is wrong): the table's refusals named only a constraint. A blank category is none.

set check_function_bodies = off;

create or replace function memory_private.check_memory_fields(p_type text, p_category text, p_confidence numeric)
returns void
language plpgsql
stable
set search_path to ''
as $function$
begin
    if p_type is not null and not exists (select 1 from memory.memory_types as t where t.type = p_type) then
        raise exception using errcode = '22023', message = format('unknown memory type %L', p_type),
            hint = 'One of: ' || (select string_agg(t.type, ', ' order by t.type) from memory.memory_types as t);
    end if;
    if length(p_category) > 100 then
        raise exception using errcode = '22023', message = 'a category is at most 100 characters';
    end if;
    if not p_confidence between 0 and 1 then
        raise exception using errcode = '22023', message = 'confidence must be between 0 and 1';
    end if;
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
    perform memory_private.check_memory_fields(p_type, p_category, p_confidence);
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
        v_user, v_profile, p_content, p_type, case when p_category ~ '[^[:space:]]' then p_category end,
        coalesce(p_confidence, 0.8), coalesce(p_context, '{}'),
        p_source_message_id, coalesce(p_pinned, false), p_expires_at
    )
    returning id into v_existing;
    perform memory_private.enforce_memory_cap(v_user, v_profile);
    -- With every other live memory pinned, the cap makes room by archiving the newcomer itself.
    return query select v_existing, case when (select m.archived from memory.memories as m where m.id = v_existing)
        then 'archived: memory cap reached' else 'added' end;
end
$function$;

create or replace function memory_private.revise_memory(
    p_memory_id uuid,
    p_content text,
    p_type text,
    p_category text,
    p_confidence numeric,
    p_source_message_id bigint,
    p_user_id uuid
)
returns memory.memories
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_scope uuid := memory_private.memory_scope();
    v_old memory.memories;
    v_new memory.memories;
begin
    select m.* into v_old from memory.memories as m
    where m.id = p_memory_id and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found';
    end if;
    perform memory_private.check_memory_fields(p_type, p_category, p_confidence);
    if not v_old.active then
        raise exception using errcode = '55000', message = 'only an active memory can be revised',
            detail = format('memory %s is %s', p_memory_id,
                case when v_old.deleted_at is not null then 'deleted' else 'superseded' end);
    end if;
    insert into memory.memories (
        user_id, profile_id, content, type, category, confidence, context, pinned, archived, expires_at,
        source_message_id
    )
    values (
        -- An empty category clears it (null keeps the old one).
        v_old.user_id, v_old.profile_id, coalesce(p_content, v_old.content), coalesce(p_type, v_old.type),
        case when coalesce(p_category, v_old.category) ~ '[^[:space:]]' then coalesce(p_category, v_old.category) end,
        coalesce(p_confidence, v_old.confidence), v_old.context, v_old.pinned, v_old.archived, v_old.expires_at,
        p_source_message_id
    )
    returning * into v_new;
    update memory.memories as m set active = false, superseded_by = v_new.id where m.id = p_memory_id;
    return v_new;
end
$function$;


revoke all on function memory_private.check_memory_fields(text, text, numeric)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_memory_fields(text, text, numeric) to authenticated, service_role;
revoke all on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
from public, anon, authenticated, service_role;
grant execute on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
to authenticated, service_role;
revoke all on function memory_private.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory_private.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
to authenticated, service_role;
