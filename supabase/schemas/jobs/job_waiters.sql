-- Why: a claim serves users least recently served first (memory.claim_jobs). Working that order
-- out from the jobs cost a probe per waiting user on every claim: 0.3 s a claim with 50,000 users
-- waiting, as a weekly summary run leaves them. Here each user waiting on a kind has one row whose
-- index is that order, so a claim reads the few users it serves. A row's user has queued jobs of
-- its kind exactly when first_due (their earliest run_after) is set; last_served is the user's
-- latest started_at over all their jobs. Triggers on the jobs keep both, whatever writes a job.
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

-- Why: one place works out the waiting rows of the users whose jobs a statement changed. p_kinds
-- names, for each user, the kind the statement may have queued work of (null where it only took
-- work or moved a started_at). Rows are locked, in one order, before the statement that works
-- them out, whose snapshot is taken once the locks are held. A statement that may have queued work
-- waits for the rows: a transaction that changed the same user's jobs has committed by then and is
-- counted, so the last writer of a row counts every committed job (worked out under an earlier
-- snapshot, a claim that took a user's last job could hide a job queued at the same moment, and
-- nobody would ever claim it). A statement that only took work skips the rows others hold: what it
-- leaves unwritten can only say a user waits, or waits since earlier, than they do, which costs a
-- later claim one probe, and claims (which hold the jobs they take) never wait on a writer who may
-- be waiting on them. Rows stay when their user stops waiting, so the next job finds its row.
create function memory_private.refresh_job_waiters(p_user_ids uuid[], p_kinds text[])
returns void
language plpgsql
security definer
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.refresh_job_waiters(uuid[], text[])
from public, anon, authenticated, service_role;
-- A claim, which runs as the service, works out the rows it found behind.
grant execute on function memory_private.refresh_job_waiters(uuid[], text[]) to service_role;

-- Why: the statements that add, change or remove jobs name the users they touched; one refresh per
-- statement, however many jobs it wrote. A change counts when it moves what the order reads:
-- whether a job is queued, a queued job's run_after, a started_at.
create function memory_private.jobs_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
