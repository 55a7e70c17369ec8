-- A review's findings, mended: a lease is at most a day whichever way it is given (job_lease too);
-- remember checks its text before the duplicate search; set_memory_settings resolves its user once;
-- a direct message's bad role says 'invalid role', as add_message does; the scheduled sweep ends a
-- run before its pauses reach half the statement timeout and does not pause after its last batch;
-- check_tenant is the service role's alone.
set check_function_bodies = off;

create or replace function memory.claim_jobs(
    p_kinds text[],
    p_worker text,
    p_limit integer default 1,
    p_lease interval default null::interval,
    p_user_ids uuid[] default null::uuid[]
)
returns table (
    id bigint, kind text, payload jsonb, user_id uuid, attempts integer, leased_until timestamp with time zone
)
language plpgsql
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_users uuid[];
    -- Round one's users: those who had a job, in order, and those who had none due.
    v_served uuid[] := '{}';
    v_idle uuid[] := '{}';
    v_batch integer;
    v_more boolean := false;
    v_anyone boolean := p_user_ids is null;
    v_claimed bigint[] := '{}';
    v_id bigint;
    v_progress boolean := false;
    v_round integer := 1;
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or not coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval)
            between interval '1 microsecond' and interval '1 day' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a lease longer than 0 and at most a day are required';
    end if;
    v_batch := p_limit + 8;
    if 'extract' = any(p_kinds) then
        perform memory_private.queue_pending_extractions();
    end if;
    -- Rounds: one job per user with due work (and one without a user) per round, until the limit
    -- or no more. Round one reads the users least recently served first, then by their oldest due
    -- job, a batch at a time: the next batch (four times larger) only when the users read fell
    -- short of the limit and more are waiting. Later rounds go through the users round one served.
    loop
        if v_round = 1 then
            select o.users, o.more into v_users, v_more
            from memory_private.claim_order(p_kinds, v_batch, p_user_ids) as o;
        else
            v_users := v_served;
        end if;
        for i in 1..cardinality(v_users) + 1 loop
            exit when cardinality(v_claimed) >= p_limit;
            if i <= cardinality(v_users) then
                -- A batch read again holds the users read before it.
                continue when v_round = 1 and (v_users[i] = any(v_served) or v_users[i] = any(v_idle));
                select j.id into v_id from memory_private.jobs as j
                where j.status = 'queued' and j.user_id = v_users[i] and j.run_after <= now()
                    and j.kind = any(p_kinds) and j.id <> all(v_claimed)
                order by j.run_after, j.id
                limit 1
                for update skip locked;
                if v_round = 1 and v_id is null then
                    v_idle := v_idle || v_users[i];
                elsif v_round = 1 then
                    v_served := v_served || v_users[i];
                end if;
            elsif v_anyone and not v_more then
                select j.id into v_id from memory_private.jobs as j
                where j.status = 'queued' and j.user_id is null and j.run_after <= now()
                    and j.kind = any(p_kinds) and j.id <> all(v_claimed)
                order by j.run_after, j.id
                limit 1
                for update skip locked;
            else
                v_id := null;
            end if;
            if v_id is not null then
                v_claimed := v_claimed || v_id;
                v_progress := true;
            end if;
        end loop;
        exit when cardinality(v_claimed) >= p_limit;
        if v_more then
            v_batch := v_batch * 4;
        else
            exit when not v_progress;
            v_round := v_round + 1;
            v_progress := false;
        end if;
    end loop;
    -- A user read as waiting with nothing due has a row behind their jobs: work it out again.
    if cardinality(v_idle) > 0 then
        perform memory_private.refresh_job_waiters(v_idle);
    end if;
    return query
    update memory_private.jobs as j
    set status = 'running', attempts = j.attempts + 1, worker = p_worker, started_at = now(),
        leased_until = now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval)
    where j.id = any(v_claimed)
    returning j.id, j.kind, j.payload, j.user_id, j.attempts, j.leased_until;
end
$function$;

create or replace function memory.extend_lease(p_job_id bigint, p_worker text, p_lease interval default null::interval)
returns timestamp with time zone
language plpgsql
set search_path to ''
as $function$
declare
    v_lease interval := coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval);
    v_until timestamptz;
begin
    -- A worker holds a job for a day at most, as claim_jobs grants it.
    if not v_lease between interval '1 microsecond' and interval '1 day' then
        raise exception using errcode = '22023', message = 'a lease must be longer than 0 and at most a day';
    end if;
    v_until := now() + v_lease;
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j set leased_until = v_until where j.id = p_job_id;
    return v_until;
end
$function$;

create or replace function memory.set_memory_settings(
    p_memory_paused boolean default null::boolean,
    p_long_term_opt_in boolean default null::boolean,
    p_user_id uuid default null::uuid
)
returns memory.users
language plpgsql
set search_path to ''
as $function$
declare
    -- Resolved once: in the update's condition it ran for every user row.
    v_user uuid := memory_private.writing_user(p_user_id);
    v_row memory.users;
begin
    update memory.users as u
    set memory_paused = coalesce(p_memory_paused, u.memory_paused),
        long_term_opt_in = coalesce(p_long_term_opt_in, u.long_term_opt_in)
    where u.id = v_user
    returning u.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'user not found';
    end if;
    return v_row;
end
$function$;

create or replace function memory_private.check_message_row()
returns trigger
language plpgsql
set search_path to ''
as $function$
declare
    v_insert boolean := tg_op = 'INSERT';
begin
    if v_insert and new.role not in ('user', 'assistant') then
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

create or replace procedure memory_private.run_retention_sweep()
language plpgsql
as $procedure$
declare
    v_batch integer := (memory_private.setting('sweep_batch_size'))::integer;
    v_max integer := (memory_private.setting('sweep_max_batches'))::integer;
    v_pause double precision := memory_private.number_setting('sweep_pause', 0);
    v_done record;
    v_resume jsonb;
    v_began timestamptz := pg_catalog.clock_timestamp();
    v_budget interval := case when pg_catalog.current_setting('statement_timeout') <> '0'
        then pg_catalog.current_setting('statement_timeout')::interval / 2 end;
    v_started timestamptz;
    v_took interval;
begin
    for i in 1..v_max loop
        v_started := pg_catalog.clock_timestamp();
        select * into v_done from memory.sweep_expired(v_batch, null, v_resume);
        v_resume := v_done.resume;
        commit;
        exit when greatest(v_done.messages_deleted, v_done.conversations_deleted, v_done.short_term_deleted) < v_batch
            or i = v_max;
        v_took := pg_catalog.clock_timestamp() - v_started;
        exit when pg_catalog.clock_timestamp() - v_began + v_took * v_pause > v_budget;
        perform pg_catalog.pg_sleep(v_pause * extract(epoch from v_took));
    end loop;
end
$procedure$;


revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
revoke all on function memory.extend_lease(bigint, text, interval) from public, anon, authenticated, service_role;
grant execute on function memory.extend_lease(bigint, text, interval) to service_role;
revoke all on function memory.set_memory_settings(boolean, boolean, uuid) from public,
anon,
authenticated,
service_role;
grant execute on function memory.set_memory_settings(boolean, boolean, uuid) to authenticated, service_role;
revoke all on function memory_private.check_message_row() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_tenant(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_tenant(uuid) to service_role;
revoke all on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
from public, anon, authenticated, service_role;
grant execute on function memory_private.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
to authenticated, service_role;
revoke all on procedure memory_private.run_retention_sweep() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_retention_sweep() to service_role;
