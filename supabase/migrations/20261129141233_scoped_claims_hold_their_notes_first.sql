-- A claim for some users waits for and holds their notes before it writes anything
-- (memory_private.hold_user_notes); the passes skip held notes again, and read a user's summary
-- notes conversation by conversation.
set check_function_bodies = off;

create or replace function memory_private.hold_user_notes(p_kinds text[], p_user_ids uuid[])
returns void
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if 'extract' = any(p_kinds) then
        perform 1 from (
            select n.message_id from memory_private.pending_extractions as n
            where n.user_id = any(p_user_ids)
            order by n.user_id, n.message_id
            limit 1000
            for update
        ) as held;
    end if;
    if 'summarize_conversation' = any(p_kinds) then
        perform 1
        from (
            select c.id from memory.conversations as c where c.user_id = any(p_user_ids) order by c.id
        ) as c
        cross join lateral (
            select n.to_turn from memory_private.pending_summaries as n
            where n.conversation_id = c.id
            order by n.to_turn
            for update
        ) as held;
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
    v_lease interval := coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval);
    v_more boolean := false;
    v_anyone boolean := p_user_ids is null;
    v_claimed bigint[] := '{}';
    v_id bigint;
    v_progress boolean := false;
    v_round integer := 1;
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or not v_lease between interval '1 microsecond' and interval '1 day' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a lease longer than 0 and at most a day are required';
    end if;
    v_batch := p_limit + 8;
    if p_user_ids is not null then
        perform memory_private.hold_user_notes(p_kinds, p_user_ids);
    end if;
    if 'extract' = any(p_kinds) then
        perform memory_private.queue_pending_extractions(1000, p_user_ids);
    end if;
    if 'summarize_conversation' = any(p_kinds) then
        perform memory_private.queue_pending_summaries(1000, p_user_ids);
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
        leased_until = now() + v_lease
    where j.id = any(v_claimed)
    returning j.id, j.kind, j.payload, j.user_id, j.attempts, j.leased_until;
end
$function$;

create or replace function memory_private.queue_pending_extractions(
    p_limit integer default 1000, p_user_ids uuid[] default null::uuid[]
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_queueing boolean := memory_private.setting('job_kinds') ? 'extract';
    v_attempts integer := (memory_private.setting('job_max_attempts'))::integer;
    v_taken integer;
    v_held bigint[];
    v_notes tid[];
begin
    if not v_queueing then
        return 0;
    end if;
    for attempt in 1..2 loop
        begin
            -- The batch by the rows' addresses (matched by key, a plan could read every note to
            -- join them), chosen in two statements: one condition for both (`p_user_ids is null or
            -- ...`) had a generic plan read every note to find a few users'.
            if p_user_ids is null then
                v_notes := array(
                    select n.ctid from memory_private.pending_extractions as n
                    order by n.user_id, n.message_id
                    limit p_limit
                    for update skip locked
                );
            else
                v_notes := array(
                    select n.ctid from memory_private.pending_extractions as n
                    where n.user_id = any(p_user_ids)
                    order by n.user_id, n.message_id
                    limit p_limit
                    for update skip locked
                );
            end if;
            with taken as (
                delete from memory_private.pending_extractions as p
                where p.ctid = any(v_notes)
                returning p.message_id
            ),
            waiting as (
                select m.id, m.conversation_id, coalesce(m.author_id, m.user_id) as author
                from taken as t
                join memory.messages as m on m.id = t.message_id
                where not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id)
            ),
            queued as (
                insert into memory_private.jobs as j (kind, payload, dedup_key, user_id, max_attempts)
                select
                    'extract', jsonb_build_object('source_message_id', w.id, 'conversation_id', w.conversation_id),
                    'message:' || w.id, w.author, v_attempts
                from waiting as w
                order by w.id
                on conflict (kind, dedup_key) where dedup_key is not null do nothing
                returning j.dedup_key
            )
            select
                (select count(*) from taken)::integer,
                array(
                    select w.id from waiting as w where 'message:' || w.id not in (select q.dedup_key from queued as q)
                )
            into v_taken, v_held;
            perform memory_private.queue_extraction(h.id) from unnest(v_held) as h (id);
            return v_taken;
        exception when foreign_key_violation then
            if attempt = 2 then
                raise;
            end if;
        end;
    end loop;
end
$function$;

create or replace function memory_private.queue_pending_summaries(
    p_limit integer default 1000, p_user_ids uuid[] default null::uuid[]
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_taken integer;
    v_notes tid[];
begin
    if not memory_private.setting('job_kinds') ? 'summarize_conversation' then
        return 0;
    end if;
    for attempt in 1..2 loop
        begin
            -- The batch by the rows' addresses (matched by key, a plan could read every note to
            -- join them), chosen in two statements: one condition for both (`p_user_ids is null or
            -- ...`) had a generic plan read every note to find a few users'.
            if p_user_ids is null then
                v_notes := array(
                    select n.ctid from memory_private.pending_summaries as n
                    order by n.conversation_id, n.to_turn
                    limit p_limit
                    for update skip locked
                );
            else
                -- The users' conversations in key order, each one's notes by one probe (joined as a
                -- set, a table never analyzed was read whole).
                v_notes := array(
                    select x.ctid
                    from (
                        select c.id from memory.conversations as c where c.user_id = any(p_user_ids) order by c.id
                    ) as c
                    cross join lateral (
                        select n.ctid, n.to_turn from memory_private.pending_summaries as n
                        where n.conversation_id = c.id
                        order by n.to_turn
                        limit p_limit
                        for update skip locked
                    ) as x
                    limit p_limit
                );
            end if;
            with taken as (
                delete from memory_private.pending_summaries as p
                where p.ctid = any(v_notes)
                returning p.conversation_id, p.to_turn, p.turns, p.noted_at
            ),
            queued as (
                insert into memory_private.jobs as j (
                    kind, payload, dedup_key, user_id, run_after, created_at, max_attempts
                )
                select
                    'summarize_conversation',
                    jsonb_build_object(
                        'conversation_id', t.conversation_id, 'from_turn', t.to_turn - t.turns + 1, 'to_turn', t.to_turn
                    ),
                    'conversation:' || t.conversation_id || ':' || t.to_turn, c.user_id, t.noted_at, t.noted_at,
                    (memory_private.setting('job_max_attempts'))::integer
                from taken as t
                join memory.conversations as c on c.id = t.conversation_id
                order by c.user_id, t.conversation_id, t.to_turn
                on conflict (kind, dedup_key) where dedup_key is not null do nothing
            )
            select count(*)::integer into v_taken from taken;
            return v_taken;
        exception when foreign_key_violation then
            if attempt = 2 then
                raise;
            end if;
        end;
    end loop;
end
$function$;


revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
revoke all on function memory_private.hold_user_notes(text[], uuid[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.hold_user_notes(text[], uuid[]) to service_role;
revoke all on function memory_private.queue_pending_extractions(integer, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_extractions(integer, uuid[]) to service_role;
revoke all on function memory_private.queue_pending_summaries(integer, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_summaries(integer, uuid[]) to service_role;
