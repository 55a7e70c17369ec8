-- Queued work takes its users' waiter rows kind by kind, then by user, as a claim queues the turns'
-- notes (extractions, then summaries): a requeue of both kinds no longer deadlocks with a claim.
set check_function_bodies = off;

create or replace function memory_private.jobs_changed()
returns trigger
language plpgsql
security definer
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
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
$function$;


revoke all on function memory_private.jobs_changed() from public, anon, authenticated, service_role;
