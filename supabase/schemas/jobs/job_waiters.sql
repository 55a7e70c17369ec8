-- Why: a claim serves users least recently served first (memory.claim_jobs). Working that order
-- out from the jobs cost a probe per waiting user on every claim: 0.3 s a claim with 50,000 users
-- waiting, as a weekly summary run leaves them. Here each user waiting on a kind has one row whose
-- index is that order, so a claim reads the few users it serves. first_due is the earliest
-- run_after of the user's queued jobs of the kind, null when there is none; last_served is the
-- user's latest started_at over all their jobs. Triggers on the jobs keep both, whatever writes a
-- job. A row may run behind its jobs only towards earlier (a claim skips the rows others hold, and
-- the claim that finds nothing due corrects them), never to null while a job is queued.
-- Private: only the kit's functions touch it.
create table memory_private.job_waiters (
    user_id uuid not null references memory.users (id) on delete cascade,
    kind text not null,
    first_due timestamptz,
    last_served timestamptz,
    primary key (user_id, kind)
);

comment on table memory_private.job_waiters is
'Users with queued jobs of a kind, in the order claims serve them (kept by triggers on the jobs).';

-- The claim's order, over the users with queued work of a kind.
create index job_waiters_order_idx on memory_private.job_waiters (kind, last_served nulls first, first_due, user_id)
where first_due is not null;

alter table memory_private.job_waiters enable row level security;

grant select on memory_private.job_waiters to service_role;

-- Why: work taken from users (a claim, a deleted job) or a started_at moved leaves their rows to be
-- worked out again from the jobs. Rows another transaction holds are skipped: that transaction
-- queued work for the user (below) or works the rows out itself, and what is left unwritten can
-- only say that a user waits, waits since earlier or was served earlier than is so: a later claim
-- pays one probe (a claim that finds nothing due calls this), or serves the user a round early
-- until their rows are worked out again. So claims, which hold the jobs they take,
-- never wait on a writer that may be waiting on them. The rows are locked before the statement that
-- works them out, whose snapshot is then taken: a job queued by a transaction that held a row has
-- committed by then and is counted. Generic plans: planned again on every call, this took a claim
-- about 340 us longer.
create function memory_private.refresh_job_waiters(p_user_ids uuid[])
returns void
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    v_users uuid[];
    v_kinds text[];
begin
    select array_agg(l.user_id), array_agg(l.kind) into v_users, v_kinds
    from (
        select w.user_id, w.kind from memory_private.job_waiters as w
        where w.user_id = any(p_user_ids)
        order by w.user_id, w.kind
        for update skip locked
    ) as l;
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
$$;

revoke all on function memory_private.refresh_job_waiters(uuid[])
from public, anon, authenticated, service_role;
-- A claim, which runs as the service, works out the rows it found behind.
grant execute on function memory_private.refresh_job_waiters(uuid[]) to service_role;

-- Why: every statement that adds, changes or removes jobs keeps the rows of the users it touched,
-- once per statement however many jobs it wrote. Queued work is added to the row in one upsert,
-- which waits for a transaction holding the row and then reads its committed value: the row can
-- only say that the user waits from earlier, never that they do not (a claim that worked the row
-- out without this job either committed before, and is read, or finds the row held and skips it).
-- Rows are taken kind by kind, then by user: a claim queues the turns' notes one kind a statement
-- (extractions, then summaries), and a statement that requeues several kinds at once (the lease
-- reaper) taking them user by user could hold what the claim's next statement needs while waiting
-- for what it holds. Then the users who had work taken or a started_at moved are worked out again
-- (memory_private.refresh_job_waiters).
create function memory_private.jobs_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    -- The queued work added (user, kind, run_after), and the users to work out again.
    v_users uuid[];
    v_kinds text[];
    v_due timestamptz[];
    v_refresh uuid[];
begin
    if tg_op = 'INSERT' then
        select array_agg(n.user_id), array_agg(n.kind), array_agg(n.run_after)
        into v_users, v_kinds, v_due
        from new_jobs as n
        where n.user_id is not null and n.status = 'queued';
        select array_agg(distinct n.user_id) into v_refresh
        from new_jobs as n
        where n.user_id is not null and n.started_at is not null;
    elsif tg_op = 'DELETE' then
        select array_agg(distinct o.user_id) into v_refresh
        from old_jobs as o
        where o.user_id is not null and (o.status = 'queued' or o.started_at is not null);
    else
        select array_agg(n.user_id), array_agg(n.kind), array_agg(n.run_after)
        into v_users, v_kinds, v_due
        from new_jobs as n
        join old_jobs as o on o.id = n.id
        where n.user_id is not null and n.status = 'queued'
            and (o.status <> 'queued' or n.run_after < o.run_after or n.kind <> o.kind or n.user_id is distinct from o.user_id);
        select array_agg(distinct x.user_id) into v_refresh
        from new_jobs as n
        join old_jobs as o on o.id = n.id
        cross join lateral (values (n.user_id), (o.user_id)) as x (user_id)
        where x.user_id is not null
            and (
                (o.status = 'queued' and (n.status <> 'queued' or n.run_after > o.run_after))
                or n.started_at is distinct from o.started_at
                or n.kind <> o.kind
                or n.user_id is distinct from o.user_id
            );
    end if;
    if v_users is not null then
        insert into memory_private.job_waiters as w (user_id, kind, first_due, last_served)
        select a.user_id, a.kind, min(a.due), (
            select max(j.started_at) from memory_private.jobs as j
            where j.user_id = a.user_id and j.started_at is not null
        )
        from unnest(v_users, v_kinds, v_due) as a (user_id, kind, due)
        group by a.user_id, a.kind
        order by a.kind, a.user_id
        on conflict (user_id, kind) do update set first_due = least(w.first_due, excluded.first_due);
    end if;
    if v_refresh is not null then
        perform memory_private.refresh_job_waiters(v_refresh);
    end if;
    return null;
end
$$;

revoke all on function memory_private.jobs_changed() from public, anon, authenticated, service_role;

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
