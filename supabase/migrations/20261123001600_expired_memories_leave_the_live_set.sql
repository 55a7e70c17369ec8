-- An expired memory has left the live set: selection and search already skip it, and now dedup,
-- the cap and archival agree. Saying "Visiting Lisbon this week" again after the first one
-- expired stores a new memory instead of bumping the hidden one; expired memories no longer take
-- places under memory_cap; the nightly archival archives them (pinned or not, opted in or not:
-- the expiry was asked for), so they show as archived instead of lingering as active.

-- Why: dedup compares with live memories only (the line on expires_at is the change).
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
$$;

-- Why: the cap counts and ranks live memories only (the two lines on expires_at are the change).
create or replace function memory_private.enforce_memory_cap(p_user_id uuid, p_profile_id uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_cap integer := (memory_private.setting('memory_cap'))::integer;
    v_archived integer;
begin
    if (select auth.uid()) is not null and p_user_id is distinct from (select auth.uid()) then
        return 0;
    end if;
    if (
        select count(*) from memory.memories as m
        where m.user_id = p_user_id and m.profile_id = p_profile_id
            and m.active and not m.archived and m.deleted_at is null
            and (m.expires_at is null or m.expires_at > now())
    ) <= v_cap then
        return 0;
    end if;
    with live as (
        select m.id, m.pinned,
            memory_private.memory_score(
                t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
            ) as score
        from memory.memories as m
        join memory.memory_types as t on t.type = m.type
        where m.user_id = p_user_id and m.profile_id = p_profile_id
            and m.active and not m.archived and m.deleted_at is null
            and (m.expires_at is null or m.expires_at > now())
    ),
    excess as (
        select l.id from live as l
        where not l.pinned
        order by l.score asc, l.id
        limit greatest(0, (select count(*) from live) - v_cap)
    )
    update memory.memories as m set archived = true
    from excess where m.id = excess.id;
    get diagnostics v_archived = row_count;
    return v_archived;
end
$$;

-- Why: the archival job also archives memories past their expiry, in bounded batches like the rest.
create or replace function memory_private.archive_stale_memories(
    p_now timestamptz default now(), p_batch_size integer default null
)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
    v_stale integer;
    v_expired integer;
begin
    with doomed as (
        select m.id
        from memory.memories as m
        inner join memory.users as u on m.user_id = u.id
        where m.active and not m.archived and not m.pinned and m.deleted_at is null
            and not u.long_term_opt_in
            and m.created_at < p_now - (memory_private.setting('memory_archive_age') #>> '{}')::interval
            and coalesce(m.last_referenced_at, m.created_at)
            < p_now - (memory_private.setting('memory_archive_unreferenced') #>> '{}')::interval
        limit v_batch
        for update of m skip locked
    )
    update memory.memories as m set archived = true from doomed where m.id = doomed.id;
    get diagnostics v_stale = row_count;
    with doomed as (
        select m.id
        from memory.memories as m
        where not m.archived and m.deleted_at is null and m.expires_at <= p_now
        limit v_batch
        for update skip locked
    )
    update memory.memories as m set archived = true from doomed where m.id = doomed.id;
    get diagnostics v_expired = row_count;
    return v_stale + v_expired;
end
$$;
create index memories_expiry_idx on memory.memories (expires_at)
where expires_at is not null and not archived and deleted_at is null;

revoke execute on all routines in schema memory, memory_private from public;
