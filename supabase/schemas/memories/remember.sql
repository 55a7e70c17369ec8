-- Why: one write path for new memories, whoever calls (a user in Settings, an extraction job). A
-- near-duplicate of a live memory of the same profile (trigram similarity >= dedup_threshold)
-- reinforces it instead of being stored again; writers of one user and profile are serialized, the
-- gate holds for a source message and the cap applies after the insert.
create function memory.remember(
    p_content text,
    p_type text,
    p_user_id uuid default null,
    p_profile_id uuid default null,
    p_category text default null,
    p_confidence numeric default 0.8,
    p_context jsonb default '{}',
    p_source_message_id bigint default null,
    p_pinned boolean default false,
    p_expires_at timestamptz default null
)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path = ''
as $$
begin
    return query
    select r.memory_id, r.outcome
    from memory_private.remember(
        p_content, p_type, p_user_id, p_profile_id, p_category, p_confidence, p_context, p_source_message_id,
        p_pinned, p_expires_at
    ) as r;
end
$$;

revoke all on function memory.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
) from public, anon, authenticated, service_role;
grant execute on function memory.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
) to authenticated, service_role;

create function memory_private.remember(
    p_content text,
    p_type text,
    p_user_id uuid,
    p_profile_id uuid,
    p_category text,
    p_confidence numeric,
    p_context jsonb,
    p_source_message_id bigint,
    p_pinned boolean,
    p_expires_at timestamptz
)
returns table (memory_id uuid, outcome text)
language plpgsql
security definer
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
) from public, anon, authenticated, service_role;
grant execute on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
) to authenticated, service_role;
