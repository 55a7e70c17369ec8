-- A claim reads the users it serves from memory_private.job_waiters, kept in the claim's order by
-- triggers on the jobs: it probed every user waiting on the kinds it took (0.3 s a claim with
-- 50,000 users waiting). The rows of the users waiting now are filled at the end.
drop index if exists memory_private.jobs_queued_kind_user_idx;

create table memory_private.job_waiters (
    user_id uuid not null,
    kind text not null,
    first_due timestamp with time zone,
    last_served timestamp with time zone
);


alter table memory_private.job_waiters enable row level security;

create index job_waiters_order_idx on memory_private.job_waiters using btree (
    kind, last_served nulls first, first_due, user_id
) where (first_due is not null);

create unique index job_waiters_pkey on memory_private.job_waiters using btree (user_id, kind);

create index jobs_queued_kind_user_idx on memory_private.jobs using btree (kind, user_id, run_after) where (
    status = 'queued'::text
);

alter table memory_private.job_waiters add constraint job_waiters_pkey primary key using index job_waiters_pkey;

alter table memory_private.job_waiters add constraint job_waiters_user_id_fkey foreign key (
    user_id
) references memory.users (id) on delete cascade not valid;

alter table memory_private.job_waiters validate constraint "job_waiters_user_id_fkey";

set check_function_bodies = off;

create or replace function memory_private.jobs_changed()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users uuid[];
    v_kinds text[];
begin
    if tg_op = 'INSERT' then
        select array_agg(n.user_id), array_agg(case when n.status = 'queued' then n.kind end)
        into v_users, v_kinds
        from new_jobs as n
        where n.user_id is not null and (n.status = 'queued' or n.started_at is not null);
    elsif tg_op = 'DELETE' then
        select array_agg(o.user_id), array_agg(null::text)
        into v_users, v_kinds
        from old_jobs as o
        where o.user_id is not null and (o.status = 'queued' or o.started_at is not null);
    else
        select array_agg(x.user_id), array_agg(x.kind)
        into v_users, v_kinds
        from new_jobs as n
        join old_jobs as o on o.id = n.id
        cross join lateral (
            values (n.user_id, case when n.status = 'queued' then n.kind end), (o.user_id, null)
        ) as x (user_id, kind)
        where x.user_id is not null
            and (
                (n.status = 'queued') <> (o.status = 'queued')
                or (n.status = 'queued' and n.run_after <> o.run_after)
                or n.started_at is distinct from o.started_at
                or n.kind <> o.kind
                or n.user_id is distinct from o.user_id
            );
    end if;
    if v_users is not null then
        perform memory_private.refresh_job_waiters(v_users, v_kinds);
    end if;
    return null;
end
$function$;

create or replace function memory_private.refresh_job_waiters(p_user_ids uuid[], p_kinds text[])
returns void
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_adds boolean := exists (select from unnest(p_kinds) as k (kind) where k.kind is not null);
    v_users uuid[];
    v_kinds text[];
begin
    if v_adds then
        insert into memory_private.job_waiters (user_id, kind)
        select distinct p.user_id, p.kind
        from unnest(p_user_ids, p_kinds) as p (user_id, kind)
        where p.kind is not null
        order by 1, 2
        on conflict do nothing;
        select array_agg(l.user_id), array_agg(l.kind) into v_users, v_kinds
        from (
            select w.user_id, w.kind from memory_private.job_waiters as w
            where w.user_id = any(p_user_ids)
            order by w.user_id, w.kind
            for update
        ) as l;
    else
        select array_agg(l.user_id), array_agg(l.kind) into v_users, v_kinds
        from (
            select w.user_id, w.kind from memory_private.job_waiters as w
            where w.user_id = any(p_user_ids)
            order by w.user_id, w.kind
            for update skip locked
        ) as l;
    end if;
    update memory_private.job_waiters as w
    set first_due = v.first_due, last_served = v.last_served
    from (
        select l.user_id, l.kind,
            (
                select min(j.run_after) from memory_private.jobs as j
                where j.status = 'queued' and j.kind = l.kind and j.user_id = l.user_id
            ) as first_due,
            (
                select max(j.started_at) from memory_private.jobs as j
                where j.user_id = l.user_id and j.started_at is not null
            ) as last_served
        from unnest(v_users, v_kinds) as l (user_id, kind)
    ) as v
    where w.user_id = v.user_id and w.kind = v.kind
        and (w.first_due, w.last_served) is distinct from (v.first_due, v.last_served);
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
    v_batch integer := p_limit + 8;
    v_more boolean := false;
    v_anyone boolean := p_user_ids is null;
    v_claimed bigint[] := '{}';
    v_id bigint;
    v_progress boolean := false;
    v_round integer := 1;
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or p_lease <= interval '0' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a positive lease are required';
    end if;
    if 'extract' = any(p_kinds) then
        perform memory_private.queue_pending_extractions();
    end if;
    -- Rounds: one job per user with due work (and one without a user) per round, until the limit
    -- or no more. Round one reads the users least recently served first, then by their oldest due
    -- job, a batch at a time: the next batch (four times larger) only when the users read fell
    -- short of the limit and more are waiting. Later rounds go through the users round one served.
    loop
        if v_round = 1 then
            select coalesce(array_agg(c.user_id order by c.last_served nulls first, c.first_due, c.user_id), '{}'),
                coalesce(bool_or(c.unread), false)
            into v_users, v_more
            from (
                select w.user_id, min(w.last_served) as last_served, min(w.first_due) as first_due,
                    bool_or(w.batch_full) as unread
                from (
                    select b.user_id, b.last_served, b.first_due,
                        count(*) over (partition by b.kind) = v_batch as batch_full
                    from unnest(p_kinds) as k (kind)
                    cross join lateral (
                        select x.user_id, x.kind, x.last_served, x.first_due
                        from memory_private.job_waiters as x
                        where x.kind = k.kind and x.first_due <= now()
                        order by x.last_served nulls first, x.first_due, x.user_id
                        limit v_batch
                    ) as b
                    where p_user_ids is null
                    union all
                    select x.user_id, x.last_served, x.first_due, false
                    from memory_private.job_waiters as x
                    where x.user_id = any(p_user_ids) and x.kind = any(p_kinds) and x.first_due <= now()
                ) as w
                group by w.user_id
            ) as c;
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
        perform memory_private.refresh_job_waiters(v_idle, array_fill(null::text, array[cardinality(v_idle)]));
    end if;
    return query
    update memory_private.jobs as j
    set status = 'running', attempts = j.attempts + 1, worker = p_worker, started_at = now(),
        leased_until = now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval)
    where j.id = any(v_claimed)
    returning j.id, j.kind, j.payload, j.user_id, j.attempts, j.leased_until;
end
$function$;

grant select on table memory_private.job_waiters to service_role;

create trigger jobs_added_waiters
after insert on memory_private.jobs
referencing new table as new_jobs
for each statement execute function memory_private.jobs_changed();

create trigger jobs_changed_waiters
after update on memory_private.jobs
referencing old table as old_jobs new table as new_jobs
for each statement execute function memory_private.jobs_changed();

create trigger jobs_removed_waiters
after delete on memory_private.jobs
referencing old table as old_jobs
for each statement execute function memory_private.jobs_changed();


revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
revoke all on function memory_private.jobs_changed() from public, anon, authenticated, service_role;
revoke all on function memory_private.refresh_job_waiters(uuid[], text[]) from public,
anon,
authenticated,
service_role;
grant execute on function memory_private.refresh_job_waiters(uuid[], text[]) to service_role;
comment on table memory_private.job_waiters is 'Users with queued jobs of a kind, in the order claims serve them (kept by triggers on the jobs).';

insert into memory_private.job_waiters (user_id, kind, first_due, last_served)
select
    q.user_id,
    q.kind,
    q.first_due,
    (
        select max(j.started_at) from memory_private.jobs as j
        where j.user_id = q.user_id and j.started_at is not null
    ) as last_served
from (
    select
        j.user_id,
        j.kind,
        min(j.run_after) as first_due
    from memory_private.jobs as j
    where j.status = 'queued' and j.user_id is not null
    group by j.user_id, j.kind
) as q;
