-- Why: a claim's users in the order it serves them, from memory_private.job_waiters: for each
-- kind the first p_batch waiting (least recently served, then by their oldest due job), or the
-- chosen users' rows; and whether a kind had more. With no sorts, so the users are read in their
-- index's order whatever the statistics say: a queue goes from a few rows to thousands between two
-- analyzes, and planned on the few, a claim read every waiting user and sorted them; and a claim of
-- anyone's work never reads the branch of chosen users. Without JIT: the planner prices the sort
-- it cannot avoid (the window's, over the few users read) at its disable cost, past JIT's
-- threshold, and compiling the statement took about 110 ms of every claim.
create function memory_private.claim_order(
    p_kinds text[], p_batch integer, p_user_ids uuid[], out users uuid[], out more boolean
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
set enable_sort = off
set jit = off
as $$
begin
    select coalesce(array_agg(c.user_id order by c.last_served nulls first, c.first_due, c.user_id), '{}'),
        coalesce(bool_or(c.unread), false)
    into users, more
    from (
        select w.user_id, min(w.last_served) as last_served, min(w.first_due) as first_due,
            bool_or(w.batch_full) as unread
        from (
            select b.user_id, b.last_served, b.first_due,
                count(*) over (partition by b.kind) = p_batch as batch_full
            from unnest(p_kinds) as k (kind)
            cross join lateral (
                select x.user_id, x.kind, x.last_served, x.first_due
                from memory_private.job_waiters as x
                where x.kind = k.kind and x.first_due <= now()
                order by x.last_served nulls first, x.first_due, x.user_id
                limit p_batch
            ) as b
            where p_user_ids is null
            union all
            select x.user_id, x.last_served, x.first_due, false
            from memory_private.job_waiters as x
            where p_user_ids is not null
                and x.user_id = any(p_user_ids) and x.kind = any(p_kinds) and x.first_due <= now()
        ) as w
        group by w.user_id
    ) as c;
end
$$;

revoke all on function memory_private.claim_order(text[], integer, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory_private.claim_order(text[], integer, uuid[]) to service_role;

-- Why: workers take a batch of the kinds they handle; `for update skip locked` lets many claim at
-- once without waiting on or double-taking a job. Jobs are dealt in rounds, one per user, least
-- recently served first, so one user's backlog never makes everyone else wait. p_user_ids keeps a
-- worker to some users' work (a tenant's dedicated worker, a demo). A worker that takes
-- extractions or summaries first turns the turns' notes into jobs
-- (memory_private.queue_pending_extractions, queue_pending_summaries), so they are claimable as
-- soon as a worker asks; a claim for some users takes theirs, first waiting for those another pass
-- holds (memory_private.hold_user_notes). The users come in that order from
-- memory_private.job_waiters, a batch at a time, so a claim reads the users it serves, not every
-- user waiting (memory_private.claim_order). Generic plans: plpgsql's own choice planned the
-- claim's reads again on every call.
create function memory.claim_jobs(
    p_kinds text[], p_worker text, p_limit integer default 1, p_lease interval default null,
    p_user_ids uuid[] default null
)
returns table (id bigint, kind text, payload jsonb, user_id uuid, attempts integer, leased_until timestamptz)
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
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
$$;

revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
