-- Writing memories: dedup on write, idempotent extraction, supersede on update, soft delete with
-- undo, pin, pause and opt-in, the per-profile cap and the extraction rate limit.

insert into memory_private.settings (key, value, description) values
('memory_cap', '1000', 'Active memories per user and profile; past it the lowest-scored is archived.'),
('extraction_rate_limit', '60', 'Extractions a user may apply per minute.');

-- Why: seed 004's selection score, in one place for selection and for the cap:
-- (type weight x confidence x recency) + 0.1 x reference count, recency = 1 / (1 + days since
-- last reference), days capped at 30.
create function memory_private.memory_score(
    p_weight numeric, p_confidence numeric, p_last_referenced_at timestamptz, p_created_at timestamptz,
    p_reference_count integer, p_now timestamptz
)
returns numeric
language sql
immutable
set search_path = ''
as $$
    select p_weight * p_confidence
        / (1 + least(30, greatest(0, extract(epoch from p_now - coalesce(p_last_referenced_at, p_created_at)) / 86400)))
        + 0.1 * p_reference_count
$$;
grant execute on function memory_private.memory_score(numeric, numeric, timestamptz, timestamptz, integer, timestamptz)
to authenticated, service_role;

-- Why: seed 004's retention cap: at most memory_cap live memories per user and profile; making
-- room archives the lowest-scored unpinned one, never deletes it.
create function memory_private.enforce_memory_cap(p_user_id uuid, p_profile_id uuid)
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
    with live as (
        select m.id, m.pinned,
            memory_private.memory_score(
                t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
            ) as score
        from memory.memories as m
        join memory.memory_types as t on t.type = m.type
        where m.user_id = p_user_id and m.profile_id = p_profile_id
            and m.active and not m.archived and m.deleted_at is null
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
grant execute on function memory_private.enforce_memory_cap(uuid, uuid) to authenticated, service_role;

-- Why: a duplicate or a use strengthens a memory: one more reference, the higher confidence.
-- Counters are not the caller's to set, so this runs as the owner and lets a signed-in caller
-- touch only their own memories (and anyone only p_user_id's, when given).
create function memory_private.reinforce(
    p_memory_ids uuid[], p_confidence numeric default null, p_user_id uuid default null
)
returns void
language sql
security definer
set search_path = ''
as $$
    update memory.memories as m
    set reference_count = m.reference_count + 1,
        last_referenced_at = now(),
        confidence = greatest(m.confidence, coalesce(p_confidence, m.confidence))
    where m.id = any(p_memory_ids) and m.user_id = coalesce((select auth.uid()), m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
$$;
grant execute on function memory_private.reinforce(uuid[], numeric, uuid) to authenticated, service_role;

-- Why: one write path for new memories, whoever calls (a user in Settings, an extraction job).
-- A near-duplicate of a live memory of the same user and profile (trigram similarity at or above
-- dedup_threshold) is not stored again: the existing one is referenced once more and keeps the
-- higher confidence. Writers of one user and profile are serialized so two near-duplicates
-- arriving together cannot both be inserted.
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
declare
    v_user uuid := memory_private.writing_user(p_user_id);
    v_profile uuid;
    v_reason text;
    v_existing uuid;
    v_threshold text;
begin
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
grant execute on function memory.remember(text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamptz)
to authenticated, service_role;

-- Why: "update" never edits a fact in place: the new version is a new memory and the old one
-- becomes inactive and points at it, so contradicting facts never both stay active and the
-- history shows what the user used to believe.
-- A null content keeps the old text (a change of type or category). Everywhere below, p_user_id
-- lets the service role act for one user: another user's memory is not found, as under RLS.
create function memory.revise_memory(
    p_memory_id uuid,
    p_content text,
    p_type text default null,
    p_category text default null,
    p_confidence numeric default null,
    p_source_message_id bigint default null,
    p_user_id uuid default null
)
returns memory.memories
language plpgsql
set search_path = ''
as $$
declare
    v_old memory.memories;
    v_new memory.memories;
begin
    select m.* into v_old from memory.memories as m
    where m.id = p_memory_id and (p_user_id is null or m.user_id = p_user_id)
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
        user_id, profile_id, content, type, category, confidence, context, pinned, expires_at, source_message_id
    )
    values (
        -- An empty category clears it (null keeps the old one).
        v_old.user_id, v_old.profile_id, coalesce(p_content, v_old.content), coalesce(p_type, v_old.type),
        nullif(coalesce(p_category, v_old.category), ''),
        coalesce(p_confidence, v_old.confidence), v_old.context, v_old.pinned, v_old.expires_at, p_source_message_id
    )
    returning * into v_new;
    update memory.memories as m set active = false, superseded_by = v_new.id where m.id = p_memory_id;
    return v_new;
end
$$;
grant execute on function memory.revise_memory(uuid, text, text, text, numeric, bigint, uuid) to authenticated,
service_role;

-- Why: seed 004's "This was saved — Undo": deleting is soft, so undo and restore are exact.
create function memory.forget(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.memories;
begin
    update memory.memories as m set deleted_at = now(), active = false
    where m.id = p_memory_id and m.deleted_at is null and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found or already deleted';
    end if;
    return v_row;
end
$$;
grant execute on function memory.forget(uuid, uuid) to authenticated, service_role;

create function memory.restore_memory(p_memory_id uuid, p_user_id uuid default null)
returns memory.memories
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.memories;
begin
    update memory.memories as m set deleted_at = null, active = m.superseded_by is null
    where m.id = p_memory_id and m.deleted_at is not null and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'no deleted memory with that id';
    end if;
    -- A restored memory counts against the cap like a new one.
    perform memory_private.enforce_memory_cap(v_row.user_id, v_row.profile_id);
    select m.* into v_row from memory.memories as m where m.id = p_memory_id;
    return v_row;
end
$$;
grant execute on function memory.restore_memory(uuid, uuid) to authenticated, service_role;

-- Why: seed 002's "always include in context".
create function memory.pin_memory(p_memory_id uuid, p_pinned boolean default true, p_user_id uuid default null)
returns memory.memories
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.memories;
begin
    update memory.memories as m set pinned = coalesce(p_pinned, true)
    where m.id = p_memory_id and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found';
    end if;
    return v_row;
end
$$;
grant execute on function memory.pin_memory(uuid, boolean, uuid) to authenticated, service_role;

-- Why: seed 004's Settings controls: pause memory building, opt in to long-term storage.
create function memory.set_memory_settings(
    p_memory_paused boolean default null, p_long_term_opt_in boolean default null, p_user_id uuid default null
)
returns memory.users
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.users;
begin
    update memory.users as u
    set memory_paused = coalesce(p_memory_paused, u.memory_paused),
        long_term_opt_in = coalesce(p_long_term_opt_in, u.long_term_opt_in)
    where u.id = memory_private.writing_user(p_user_id)
    returning u.* into v_row;
    return v_row;
end
$$;
grant execute on function memory.set_memory_settings(boolean, boolean, uuid) to authenticated, service_role;

-- The extraction ledger: one row per source message makes a retried extraction a no-op.
create table memory.memory_extractions (
    source_message_id bigint primary key references memory.messages (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    memory_ids uuid[] not null default '{}',
    created_at timestamptz not null default now()
);
create index memory_extractions_user_recent_idx on memory.memory_extractions (user_id, created_at desc);
create index memory_extractions_tenant_id_idx on memory.memory_extractions (tenant_id);
comment on table memory.memory_extractions is 'Which source messages were already extracted, and what they gave.';

create trigger memory_extractions_inherit_tenant
before insert or update of user_id, tenant_id on memory.memory_extractions
for each row execute function memory_private.inherit_tenant();

alter table memory.memory_extractions enable row level security;
create policy "Users and their tenant admins read extractions" on memory.memory_extractions
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
grant select on memory.memory_extractions to authenticated;
grant select, insert, update, delete on memory.memory_extractions to service_role;

-- Why: an extraction job may run twice for one message (a retry, a reclaimed lease); the ledger
-- row makes the second run return the first run's result and change nothing. The gate is
-- checked again here (the user may have paused memory since the job was queued): a closed gate
-- is an answer, not an error. Each item is an operation the model chose after seeing
-- the nearest existing memories: {"op": "add", "content", "type", "confidence", "category",
-- "context"} (the default), {"op": "update", "memory_id", "content", ...} which supersedes,
-- {"op": "delete", "memory_id"} which soft-deletes, or {"op": "none"}. Dedup and history apply
-- as for any write. Past extraction_rate_limit applications per user per minute: 54000.
create function memory.apply_extraction(p_source_message_id bigint, p_memories jsonb, p_user_id uuid default null)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path = ''
as $$
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
    if (select count(*) from memory.memory_extractions as e
        where e.user_id = v_user and e.created_at > now() - interval '1 minute')
        > (memory_private.setting('extraction_rate_limit'))::integer then
        raise exception using errcode = '54000',
            message = format('rate limit: %s extractions per user per minute', memory_private.setting('extraction_rate_limit')),
            hint = 'Retry after a minute.';
    end if;
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
$$;
grant execute on function memory.apply_extraction(bigint, jsonb, uuid) to service_role;

revoke execute on all routines in schema memory, memory_private from public;
