-- Writers of a user's memories take the user's row before any memory's (remember, revise_memory,
-- an extraction's operations): a new memory's number updates that row, so the other order deadlocked.
set check_function_bodies = off;

create or replace function memory_private.lock_memory_writer(p_user_id uuid)
returns void
language plpgsql
set search_path to ''
as $function$
begin
    perform from memory.users as u where u.id = p_user_id for no key update;
end
$function$;

create or replace function memory_private.extract_memories(
    p_source_message_id bigint, p_memories jsonb, p_user_id uuid, p_enforce_rate_limit boolean
)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_item jsonb;
    v_reason text;
    v_target uuid;
    v_ids uuid [] := '{}';
begin
    if jsonb_typeof(p_memories) is distinct from 'array' or jsonb_array_length(p_memories) > 3 then
        raise exception using errcode = '22023', message = 'memories must be a JSON array of at most 3 items';
    end if;
    -- A closed gate leaves no ledger row: the message can still be extracted for its real author.
    v_reason := memory_private.memory_gate(v_user, p_source_message_id);
    if v_reason is not null then
        return query select null::uuid, 'skipped: ' || v_reason;
        return;
    end if;
    -- The ledger row first: a retry, or a concurrent run that waited on this row, changes nothing.
    insert into memory.memory_extractions (source_message_id, user_id)
    values (p_source_message_id, v_user)
    on conflict (source_message_id) do nothing;
    if not found then
        return query
        select unnest(e.memory_ids), 'already extracted'::text
        from memory.memory_extractions as e where e.source_message_id = p_source_message_id;
        return;
    end if;
    -- The row just written counts, so more than the limit means this one is over it.
    if p_enforce_rate_limit and (select count(*) from memory.memory_extractions as e
        where e.user_id = v_user and e.created_at > now() - interval '1 minute')
        > (memory_private.setting('extraction_rate_limit'))::integer then
        raise exception using errcode = '54000',
            message = format('rate limit: %s extractions per user per minute', memory_private.setting('extraction_rate_limit')),
            hint = 'Retry after a minute.';
    end if;
    -- The user's row before any memory's: an operation may lock a memory, a later one number a new one.
    perform memory_private.lock_memory_writer(v_user);
    for v_item in select jsonb_array_elements(p_memories) loop
        case coalesce(v_item ->> 'op', 'add')
            when 'add' then
                select r.memory_id, r.outcome into memory_id, outcome from memory.remember(
                    p_content => v_item ->> 'content',
                    p_type => v_item ->> 'type',
                    p_user_id => v_user,
                    p_category => v_item ->> 'category',
                    p_confidence => coalesce((v_item ->> 'confidence')::numeric, 0.8),
                    p_context => coalesce(v_item -> 'context', '{}'),
                    p_source_message_id => p_source_message_id
                ) as r;
            when 'update' then
                v_target := (v_item ->> 'memory_id')::uuid;
                if not exists (select 1 from memory.memories as m where m.id = v_target and m.user_id = v_user) then
                    raise exception using errcode = 'P0002', message = format('memory %s not found for this user', v_target);
                end if;
                memory_id := (memory.revise_memory(
                    v_target, v_item ->> 'content', v_item ->> 'type', v_item ->> 'category',
                    (v_item ->> 'confidence')::numeric, p_source_message_id
                )).id;
                outcome := 'superseded';
            when 'delete' then
                v_target := (v_item ->> 'memory_id')::uuid;
                if not exists (select 1 from memory.memories as m where m.id = v_target and m.user_id = v_user) then
                    raise exception using errcode = 'P0002', message = format('memory %s not found for this user', v_target);
                end if;
                memory_id := (memory.forget(v_target)).id;
                outcome := 'deleted';
            when 'none' then
                continue;
            else
                raise exception using errcode = '22023', message = format('unknown operation %L', v_item ->> 'op'),
                    hint = 'op is one of add, update, delete, none';
        end case;
        v_ids := v_ids || memory_id;
        return next;
    end loop;
    update memory.memory_extractions as e set memory_ids = v_ids where e.source_message_id = p_source_message_id;
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
    if tg_op = 'INSERT' then
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
    -- Before the duplicate search, which would answer an overlong near-duplicate with the old memory.
    perform memory_private.check_text('content', p_content, 2000);
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
    -- One writer of the user's memories at a time, from the duplicate search to the insert.
    perform memory_private.lock_memory_writer(v_user);
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
    -- The user's row before the memory's (memory_private.lock_memory_writer).
    perform memory_private.lock_memory_writer((
        select m.user_id from memory.memories as m
        where m.id = p_memory_id and m.user_id = coalesce(v_scope, m.user_id)
            and (p_user_id is null or m.user_id = p_user_id)
    ));
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


revoke all on function memory_private.extract_memories(bigint, jsonb, uuid, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.extract_memories(bigint, jsonb, uuid, boolean) to service_role;
revoke all on function memory_private.lock_memory_writer(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.lock_memory_writer(uuid) to service_role;
revoke all on function memory_private.memory_defaults() from public, anon, authenticated, service_role;
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
