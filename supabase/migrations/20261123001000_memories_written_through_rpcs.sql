-- Memories are written through the memory RPCs only, so every write obeys the same rules.
--
-- Why: 20261122000700 let signed-in users insert, update and delete their own rows of
-- memory.memories through the Data API, and service_role write any row. Every rule the kit
-- promises for memories lived in the RPCs, so a direct write skipped it: an insert skipped dedup
-- and the per-profile cap (only memory.remember applies them); an update could edit content in
-- place instead of superseding, unarchive past the cap, or clear superseded_by and set active so
-- that two contradicting facts were both active again; a delete removed a memory with no undo and
-- no history event. Triggers could re-check each rule on every direct write, but they would have
-- to rebuild the RPCs' decisions from a bare row (is this insert a revision or a new memory? is
-- this unarchive within the cap?) and the table would still offer two ways to do one thing.
--
-- The design, for every role that reaches the Data API:
-- * Memories are read through the table (RLS as before) and written through the RPCs:
--   remember (dedup, cap), revise_memory (supersede), forget (soft delete), restore_memory
--   (undo, cap), unarchive_memory (new here, cap), pin_memory, apply_extraction and
--   import_memories (service_role), and the reference counting of selection.
-- * The one direct write left is the pinned flag, for authenticated (own rows, RLS) and
--   service_role: pinning changes no count, no content and no state, and its pin / unpin event is
--   recorded by trigger as for any update. It also keeps `select ... for update` on memories
--   working for functions that run as their caller (row locks need an UPDATE privilege).
-- * No API role may insert or delete rows. Hard deletes are left to the retention purge (30 days
--   after a soft delete, pg_cron), erasing a user and deleting a profile (both cascade), and the
--   table owner; 20261123001010 records them in the history.
-- * service_role is trusted with every user but not with the rules: it writes through the same
--   RPCs (naming the user with p_user_id), so the cap, dedup and supersession hold for the jobs
--   and app servers too. The table owner (migrations, pg_cron, the SQL editor) is the only role
--   that can still change a row by hand, for repairs.
--
-- The RPCs ran as their caller with RLS deciding what they reached; they now need to write a
-- table their callers cannot, so each becomes a thin invoker wrapper in `memory` (its signature,
-- grants and behaviour unchanged) around a security definer implementation in memory_private.
-- memory_private.memory_scope applies what RLS applied before, in one place: a signed-in user
-- changes only their own memories (another user's memory is not found, P0002; remembering for
-- another user is refused, 42501), and a caller without a signed-in user must hold the service
-- role. The bodies are those of 20261122000800 / 20261122001000 with three fixes: a revision
-- keeps the archived state of what it revises (it made an archived memory live again, past the
-- cap), and a restored memory that was ever superseded stays inactive (purging its successor
-- clears superseded_by, and the restore made the old fact active again).

-- Why: the single place that says whose memories the caller may change, now that RLS no longer
-- guards the writes. Returns the signed-in user's id, or null for a trusted caller (the service
-- role, or the table owner: migrations, pg_cron), who may act on any user's memories and names
-- one with p_user_id. Anyone else (anon, or the authenticated role without a user id in its
-- claims) is refused. Called only from the security definer writers below (the role setting is
-- still the caller's there), so it is granted to nobody.
create function memory_private.memory_scope()
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
    v_uid uuid := (select auth.uid());
    v_role text := coalesce(nullif(current_setting('role'), 'none'), session_user);
begin
    if v_uid is not null then
        return v_uid;
    end if;
    if not pg_has_role(v_role, 'service_role', 'usage') then
        raise exception using errcode = '42501', message = 'memories are changed by a signed-in user or the service role',
            detail = format('role %s has no user id', v_role);
    end if;
    return null;
end
$$;

-- Row privileges: reads as before, writes through the RPCs, pinning aside.
revoke insert, update, delete, truncate on memory.memories from authenticated, service_role;
grant update (pinned) on memory.memories to authenticated, service_role;
drop policy "Users add their own memories" on memory.memories;
drop policy "Users delete their own memories" on memory.memories;
alter policy "Users update their own memories" on memory.memories rename to "Users pin their own memories";
comment on table memory.memories is
'Long-term memories: facts, goals, patterns ... remembered about a user and profile. Read through the table; written through the memory RPCs (only pinned is directly writable).';

-- Why: memory.remember's body (20261122000800), run as the owner: dedup on write, the cap, the
-- gate for a source message. A signed-in caller remembers only for themselves (42501, as RLS did).
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
grant execute on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamptz
) to authenticated, service_role;

create or replace function memory.remember(
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
language sql
set search_path = ''
as $$
    select r.memory_id, r.outcome
    from memory_private.remember(
        p_content, p_type, p_user_id, p_profile_id, p_category, p_confidence, p_context, p_source_message_id,
        p_pinned, p_expires_at
    ) as r
$$;

-- Why: memory.revise_memory's body (20261122000800), run as the owner: the new version is a new
-- memory and the old one becomes inactive and points at it. The new version keeps the old one's
-- pinned, archived and expiry state: revising an archived memory edits it in the archive (it
-- used to come back live, past the cap; unarchive_memory is the way back).
create function memory_private.revise_memory(
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
set search_path = ''
as $$
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
        nullif(coalesce(p_category, v_old.category), ''),
        coalesce(p_confidence, v_old.confidence), v_old.context, v_old.pinned, v_old.archived, v_old.expires_at,
        p_source_message_id
    )
    returning * into v_new;
    update memory.memories as m set active = false, superseded_by = v_new.id where m.id = p_memory_id;
    return v_new;
end
$$;
grant execute on function memory_private.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
to authenticated, service_role;

create or replace function memory.revise_memory(
    p_memory_id uuid,
    p_content text,
    p_type text default null,
    p_category text default null,
    p_confidence numeric default null,
    p_source_message_id bigint default null,
    p_user_id uuid default null
)
returns memory.memories
language sql
set search_path = ''
as $$
    select * from memory_private.revise_memory(
        p_memory_id, p_content, p_type, p_category, p_confidence, p_source_message_id, p_user_id
    )
$$;

-- Why: memory.forget's body (20261122000800), run as the owner: the soft delete behind seed 004's
-- "Undo"; the row stays until the purge.
create function memory_private.forget(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m set deleted_at = now(), active = false
    where m.id = p_memory_id and m.deleted_at is null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found or already deleted';
    end if;
    return v_row;
end
$$;
grant execute on function memory_private.forget(uuid, uuid) to authenticated, service_role;

create or replace function memory.forget(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language sql
set search_path = ''
as $$
    select * from memory_private.forget(p_memory_id, p_user_id)
$$;

-- Why: memory.restore_memory's body (20261122000800), run as the owner: the undo. A memory that
-- was ever superseded comes back inactive even when its successor has been purged meanwhile (the
-- purge clears superseded_by), so an old version never becomes active next to a newer one; and
-- the restored memory counts against the cap like a new one.
create function memory_private.restore_memory(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m
    set deleted_at = null,
        active = m.superseded_by is null and not exists (
            select 1 from memory.memory_events as e where e.memory_id = m.id and e.event = 'supersede'
        )
    where m.id = p_memory_id and m.deleted_at is not null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'no deleted memory with that id';
    end if;
    perform memory_private.enforce_memory_cap(v_row.user_id, v_row.profile_id);
    select m.* into v_row from memory.memories as m where m.id = p_memory_id;
    return v_row;
end
$$;
grant execute on function memory_private.restore_memory(uuid, uuid) to authenticated, service_role;

create or replace function memory.restore_memory(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language sql
set search_path = ''
as $$
    select * from memory_private.restore_memory(p_memory_id, p_user_id)
$$;

-- Why: memory.pin_memory's body (20261122000800), run as the owner, for callers who prefer the
-- RPC (or act for a user as the service role) to the direct update of pinned.
create function memory_private.pin_memory(p_memory_id uuid, p_pinned boolean, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m set pinned = coalesce(p_pinned, true)
    where m.id = p_memory_id and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found';
    end if;
    return v_row;
end
$$;
grant execute on function memory_private.pin_memory(uuid, boolean, uuid) to authenticated, service_role;

create or replace function memory.pin_memory(
    p_memory_id uuid, p_pinned boolean default true, p_user_id uuid default null
)
returns memory.memories
language sql
set search_path = ''
as $$
    select * from memory_private.pin_memory(p_memory_id, p_pinned, p_user_id)
$$;

-- Why: an archived memory (made room for by the cap, or old and unreferenced) can come back, but
-- only as the cap allows: it counts against the cap like a new memory, and when the profile is
-- full the lowest-scored unpinned live memory is archived in its place, which may be this one
-- again (the returned row says so; pin it first to keep it). Signed-in users used to unarchive by
-- a direct update that ignored the cap; this is the way that keeps it.
create function memory_private.unarchive_memory(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m set archived = false
    where m.id = p_memory_id and m.archived and m.deleted_at is null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'no archived memory with that id',
            hint = 'A deleted memory is brought back with restore_memory.';
    end if;
    perform memory_private.enforce_memory_cap(v_row.user_id, v_row.profile_id);
    select m.* into v_row from memory.memories as m where m.id = p_memory_id;
    return v_row;
end
$$;
grant execute on function memory_private.unarchive_memory(uuid, uuid) to authenticated, service_role;

create function memory.unarchive_memory(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language sql
set search_path = ''
as $$
    select * from memory_private.unarchive_memory(p_memory_id, p_user_id)
$$;
grant execute on function memory.unarchive_memory(uuid, uuid) to authenticated, service_role;

-- Why: memory.import_memories' body (20261122001000), run as the owner: service_role no longer
-- inserts memories directly, and an import restores records as they were (ids, states, counters,
-- times), which no other RPC may do. Service role only, as before; the cap applies afterwards.
create function memory_private.import_memories(p_export jsonb, p_user_id uuid)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
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
    select p.id, v_user, p.name,
        p.is_primary and not exists (select 1 from memory.profiles as o where o.user_id = v_user and o.is_primary),
        p.timezone, p.attributes, p.created_at
    from jsonb_populate_recordset(null::memory.profiles, p_export -> 'profiles') as p
    where not exists (select 1 from memory.profiles as o where o.id = p.id);

    update memory.users as u
    set memory_paused = u.memory_paused or coalesce((p_export #>> '{settings,memory_paused}')::boolean, false),
        long_term_opt_in = coalesce((p_export #>> '{settings,long_term_opt_in}')::boolean, u.long_term_opt_in)
    where u.id = v_user;

    insert into memory.memories (
        id, user_id, profile_id, content, type, category, confidence, context, origin_mode,
        source_conversation_id, source_message_id, turn_index, pinned, active, archived, deleted_at,
        expires_at, created_at, updated_at, last_referenced_at, reference_count
    )
    select m.id, v_user, m.profile_id, m.content, m.type, m.category, m.confidence, m.context, m.origin_mode,
        (select c.id from memory.conversations as c where c.id = m.source_conversation_id and c.user_id = v_user),
        case when memory_private.memory_gate(v_user, m.source_message_id) is null then m.source_message_id end,
        m.turn_index, m.pinned, m.active and m.superseded_by is null, m.archived, m.deleted_at,
        m.expires_at, m.created_at, coalesce(m.updated_at, now()), m.last_referenced_at, m.reference_count
    from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as m
    where not exists (select 1 from memory.memories as o where o.id = m.id)
    order by m.created_at, m.id;
    get diagnostics v_added = row_count;

    -- Successor links are restored once every record is back.
    update memory.memories as m set superseded_by = e.superseded_by, active = false, updated_at = e.updated_at
    from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as e
    where m.id = e.id and m.user_id = v_user and e.superseded_by is not null and m.superseded_by is null
        and exists (select 1 from memory.memories as s where s.id = e.superseded_by and s.user_id = v_user);
    perform memory_private.enforce_memory_cap(v_user, p.id) from memory.profiles as p where p.user_id = v_user;
    return v_added;
end
$$;
grant execute on function memory_private.import_memories(jsonb, uuid) to service_role;

create or replace function memory.import_memories(p_export jsonb, p_user_id uuid default null)
returns integer
language sql
set search_path = ''
as $$
    select memory_private.import_memories(p_export, p_user_id)
$$;

revoke execute on all routines in schema memory, memory_private from public;
