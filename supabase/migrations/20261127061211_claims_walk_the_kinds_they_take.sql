-- A claim walks the users waiting on the kinds it takes, not every user with queued work: a
-- backlog of one kind slowed every claim of the others (about 5 us a waiting user).
create index jobs_queued_kind_user_idx on memory_private.jobs using btree (kind, user_id) where (
    status = 'queued'::text
);

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
    v_anyone boolean;
    v_claimed bigint[] := '{}';
    v_id bigint;
    v_progress boolean;
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or p_lease <= interval '0' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a positive lease are required';
    end if;
    if 'extract' = any(p_kinds) then
        perform memory_private.queue_pending_extractions();
    end if;
    -- The users with due work of these kinds, least recently served first. The walk goes from user
    -- to user through the queued jobs of each kind asked for (one probe a user and kind): walking the
    -- users with queued work of any kind made a backlog of one kind slow every claim of the others.
    with recursive waiting (kind, user_id) as (
        select k.kind, (
            select j.user_id from memory_private.jobs as j
            where j.status = 'queued' and j.kind = k.kind and j.user_id is not null
            order by j.user_id limit 1
        )
        from unnest(p_kinds) as k (kind)
        where p_user_ids is null
        union all
        select w.kind, (
            select j.user_id from memory_private.jobs as j
            where j.status = 'queued' and j.kind = w.kind and j.user_id > w.user_id
            order by j.user_id limit 1
        )
        from waiting as w
        where w.user_id is not null
    ),
    candidates as (
        select w.user_id from waiting as w where w.user_id is not null
        union
        select u.user_id from unnest(p_user_ids) as u (user_id) where u.user_id is not null
    )
    select array_agg(c.user_id order by s.last_served nulls first, h.first_due, c.user_id)
    into v_users
    from candidates as c
    cross join lateral (
        select min(j.run_after) as first_due from memory_private.jobs as j
        where j.status = 'queued' and j.user_id = c.user_id and j.run_after <= now() and j.kind = any(p_kinds)
    ) as h
    cross join lateral (
        select max(j.started_at) as last_served from memory_private.jobs as j
        where j.user_id = c.user_id and j.started_at is not null
    ) as s
    where h.first_due is not null;
    v_users := coalesce(v_users, '{}');
    v_anyone := p_user_ids is null;
    -- Rounds: one job per user (and one without a user) per round, until the limit or no more.
    loop
        v_progress := false;
        for i in 1..cardinality(v_users) + 1 loop
            exit when cardinality(v_claimed) >= p_limit;
            if i <= cardinality(v_users) then
                select j.id into v_id from memory_private.jobs as j
                where j.status = 'queued' and j.user_id = v_users[i] and j.run_after <= now()
                    and j.kind = any(p_kinds) and j.id <> all(v_claimed)
                order by j.run_after, j.id
                limit 1
                for update skip locked;
            elsif v_anyone then
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
        exit when not v_progress or cardinality(v_claimed) >= p_limit;
    end loop;
    return query
    update memory_private.jobs as j
    set status = 'running', attempts = j.attempts + 1, worker = p_worker, started_at = now(),
        leased_until = now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval)
    where j.id = any(v_claimed)
    returning j.id, j.kind, j.payload, j.user_id, j.attempts, j.leased_until;
end
$function$;


revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
