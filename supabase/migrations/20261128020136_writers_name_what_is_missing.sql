-- The writers name what is missing or out of range where a table would name only its constraint:
-- an unregistered user written for by the service role (not found), a tenant or Supabase Auth user
-- that is not there, a taken conversation id, a memory's text and a message's role and text (on
-- every way in), a lease past a day, a claim's limit past 2^31.
drop trigger if exists memories_context_checked on memory.memories;

drop trigger if exists messages_checked_on_insert on memory.messages;

drop function if exists memory_private.check_memory_context();

set check_function_bodies = off;

create or replace function memory_private.auth_user_exists(p_user_id uuid)
returns boolean
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    return exists (select 1 from auth.users as u where u.id = p_user_id);
end
$function$;

create or replace function memory_private.check_memory_row()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    if tg_op = 'INSERT' or new.content is distinct from old.content then
        perform memory_private.check_text('content', new.content, 2000);
    end if;
    if tg_op = 'INSERT' or new.context is distinct from old.context then
        perform memory_private.check_json('context', new.context, 'object', 100000);
    end if;
    return new;
end
$function$;

create or replace function memory_private.check_tenant(p_tenant_id uuid)
returns void
language plpgsql
stable
set search_path to ''
as $function$
begin
    if p_tenant_id is not null and not exists (select 1 from memory.tenants as t where t.id = p_tenant_id) then
        raise exception using errcode = '23503', message = format('tenant %s not found', p_tenant_id);
    end if;
end
$function$;

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
        or p_lease <= interval '0' or p_lease > interval '1 day' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a lease of at most a day are required';
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

create or replace function memory.create_conversation(
    p_user_id uuid default null::uuid,
    p_title text default null::text,
    p_mode text default 'chat'::text,
    p_profile_id uuid default null::uuid,
    p_remember boolean default null::boolean,
    p_metadata jsonb default '{}'::jsonb,
    p_ttl interval default null::interval,
    p_window_turns integer default null::integer,
    p_id uuid default null::uuid
)
returns memory.conversations
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.writing_user(p_user_id);
    v_conversation memory.conversations;
begin
    insert into memory.conversations (id, user_id, title, mode, profile_id, remember, metadata, ttl, window_turns)
    values (coalesce(p_id, gen_random_uuid()), v_user, p_title, coalesce(p_mode, 'chat'), p_profile_id, p_remember,
        coalesce(p_metadata, '{}'), p_ttl, p_window_turns)
    on conflict (id) do nothing
    returning * into v_conversation;
    -- Only a chosen id can be taken; the table's refusal would name only its key.
    if not found then
        raise exception using errcode = '23505', message = format('conversation id %s is taken', p_id);
    end if;
    return v_conversation;
end
$function$;

create or replace function memory.extend_lease(p_job_id bigint, p_worker text, p_lease interval default null::interval)
returns timestamp with time zone
language plpgsql
set search_path to ''
as $function$
declare
    v_until timestamptz;
begin
    -- A worker holds a job for a day at most, as claim_jobs grants it.
    if p_lease <= interval '0' or p_lease > interval '1 day' then
        raise exception using errcode = '22023', message = 'a lease must be positive and at most a day';
    end if;
    v_until := now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval);
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j set leased_until = v_until where j.id = p_job_id;
    return v_until;
end
$function$;

create or replace function memory.register_user(p_user_id uuid default null::uuid, p_tenant_id uuid default null::uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_id uuid := memory_private.acting_user(p_user_id);
begin
    -- What the foreign keys would refuse naming only themselves, for the service role, who alone may
    -- register another and choose a tenant (anyone else meets the grants): a tenant or a Supabase
    -- Auth user that is not there.
    if (select auth.uid()) is distinct from v_id and memory_private.trusted_caller() then
        perform memory_private.check_tenant(p_tenant_id);
        -- Statements of their own: only the service role may execute the lookup.
        if not exists (select 1 from memory.users as u where u.id = v_id) then
            if not memory_private.auth_user_exists(v_id) then
                raise exception using errcode = '23503', message = format('no Supabase Auth user %s', v_id),
                    hint = 'Register Supabase Auth users by their id; resolve an app''s own ids with '
                    || 'memory.user_id_for.';
            end if;
        end if;
    end if;
    -- Two statements: a signed-in user may insert only id and auth_user_id (column grants).
    if p_tenant_id is null then
        insert into memory.users (id, auth_user_id) values (v_id, v_id) on conflict do nothing;
    else
        insert into memory.users (id, auth_user_id, tenant_id) values (v_id, v_id, p_tenant_id) on conflict do nothing;
        if not found and exists (
            select 1 from memory.users as u where u.id = v_id and u.tenant_id is distinct from p_tenant_id
        ) then
            raise exception using errcode = '55000',
                message = format('user %s is registered in another tenant or in none', v_id),
                hint = 'Registering does not move a user: export their memories, erase the user, and import '
                || 'them for a user of the tenant.';
        end if;
    end if;
    return v_id;
end
$function$;

create or replace function memory.user_id_for(p_external_id text, p_tenant_id uuid default null::uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_id uuid;
begin
    if p_external_id is null or p_external_id !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'external user id must not be empty';
    end if;
    -- Longer, its index entry overflowed (54000, which reads as a limit to retry later).
    if length(p_external_id) > 255 then
        raise exception using errcode = '22023', message = 'external user id must be at most 255 characters';
    end if;
    perform memory_private.check_tenant(p_tenant_id);
    insert into memory.users (tenant_id, external_id)
    values (p_tenant_id, p_external_id)
    on conflict (tenant_id, external_id) where external_id is not null do nothing
    returning id into v_id;
    if v_id is null then
        select u.id into v_id
        from memory.users as u
        where u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id;
    end if;
    return v_id;
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
        raise exception using errcode = '22023', message = format('role must be user or assistant, not %L', new.role);
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

create or replace function memory_private.writing_user(p_user_id uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    if (select auth.uid()) = v_user then
        perform memory.register_user(v_user);
    -- The service role writing for a user nobody registered would meet a foreign key naming only
    -- itself; the service role reads every user, so the answer is sure (others are left to RLS).
    elsif memory_private.trusted_caller() and not exists (select 1 from memory.users as u where u.id = v_user) then
        raise exception using errcode = 'P0002', message = 'user not found',
            detail = format('No user %s is registered.', v_user),
            hint = 'Register the user first (memory.register_user), or resolve an app''s id with memory.user_id_for.';
    end if;
    return v_user;
end
$function$;

create trigger memories_checked before insert or update of content,
context on memory.memories for each row when (
    ((new.content !~ '[^[:space:]]'::text) or (length(new.content) > 2000) or (new.context <> '{}'::jsonb))
) execute function memory_private.check_memory_row();

create trigger messages_checked_on_insert before insert on memory.messages for each row when (
    (
        (new.metadata <> '{}'::jsonb)
        or (new.tool_calls is not null)
        or (new.suggested_values is not null)
        or (new.suggested_actions is not null)
        or (new.custom_payload is not null)
        or (new.role <> all(array['user'::text, 'assistant'::text]))
        or (new.content !~ '[^[:space:]]'::text)
        or (length(new.content) > 100000)
    )
) execute function memory_private.check_message_row();


revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
revoke all on function memory.create_conversation(uuid, text, text, uuid, boolean, jsonb, interval, integer, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.create_conversation(uuid, text, text, uuid, boolean, jsonb, interval, integer, uuid)
to authenticated, service_role;
revoke all on function memory.extend_lease(bigint, text, interval) from public, anon, authenticated, service_role;
grant execute on function memory.extend_lease(bigint, text, interval) to service_role;
revoke all on function memory.register_user(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.register_user(uuid, uuid) to authenticated, service_role;
revoke all on function memory.user_id_for(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.user_id_for(text, uuid) to service_role;
revoke all on function memory_private.auth_user_exists(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.auth_user_exists(uuid) to service_role;
revoke all on function memory_private.check_memory_row() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_message_row() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_tenant(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_tenant(uuid) to authenticated, service_role;
revoke all on function memory_private.trusted_caller() from public, anon, authenticated, service_role;
grant execute on function memory_private.trusted_caller() to authenticated, service_role;
revoke all on function memory_private.writing_user(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.writing_user(uuid) to authenticated, service_role;
