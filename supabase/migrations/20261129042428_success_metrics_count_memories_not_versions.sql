-- success_metrics counts memories, not the versions edits make, and reports UTC months whatever
-- the session's time zone.
set check_function_bodies = off;

create or replace function memory_private.success_metrics(p_month date, p_tenant_id uuid, p_many integer)
returns setof memory.success_metrics_report
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_month timestamp;
    v_start timestamptz;
    v_end timestamptz;
    v_next timestamptz;
    v_threshold text := coalesce(current_setting('pg_trgm.similarity_threshold', true), '0.3');
begin
    if (select auth.uid()) is not null
        and (p_tenant_id is null or not p_tenant_id = any((select memory_private.administered_tenants())::uuid[])) then
        raise exception using errcode = '42501', message = 'success metrics are for the service role and tenant admins';
    end if;
    if p_month is not null and (not isfinite(p_month) or p_month not between '0001-01-01' and '9999-12-31') then
        raise exception using errcode = '22023', message = 'p_month must be a date between the years 1 and 9999';
    end if;
    if p_many is null or p_many < 1 then
        raise exception using errcode = '22023', message = 'p_many must be a positive number of memories';
    end if;
    v_month := date_trunc('month', coalesce(p_month::timestamp, now() at time zone 'UTC'));
    v_start := v_month at time zone 'UTC';
    v_end := (v_month + interval '1 month') at time zone 'UTC';
    v_next := (v_month + interval '2 months') at time zone 'UTC';
    -- The % operator at the dedup threshold: the trigram index finds each memory's near-duplicates,
    -- as remember's dedup finds them (restored afterwards).
    perform set_config('pg_trgm.similarity_threshold', memory_private.setting('dedup_threshold') #>> '{}', true);
    return query
    with scope as (
        select u.id from memory.users as u where p_tenant_id is null or u.tenant_id = p_tenant_id
    ),
    answered as (
        select m.user_id, m.used_memory_ids, m.helpful, m.metadata ->> 'memory_arm' as arm
        from memory.messages as m
        where m.role = 'assistant' and m.created_at >= v_start and m.created_at < v_end
            and m.user_id in (select s.id from scope as s)
    ),
    active as (
        select distinct a.user_id from answered as a
    ),
    kept as (
        select a.user_id, (
            -- One per memory, not per version: a version replaced before the month's end is left out.
            select count(*) from memory.memories as k
            where k.user_id = a.user_id and k.created_at < v_end and (k.deleted_at is null or k.deleted_at >= v_end)
                and not exists (
                    select 1 from memory.memories as n where n.id = k.superseded_by and n.created_at < v_end
                )
        ) >= p_many as many,
        exists (
            select 1 from memory.messages as n
            where n.user_id = a.user_id and n.role = 'assistant' and n.created_at >= v_end and n.created_at < v_next
        ) as retained
        from active as a
    ),
    live as (
        select k.id, k.user_id, k.profile_id, k.content, k.created_at
        from memory.memories as k
        where k.user_id in (select s.id from scope as s)
            and k.active and not k.archived and k.deleted_at is null and (k.expires_at is null or k.expires_at > now())
    ),
    figures as (
        select
            (select count(*) from active)::integer as active_users,
            (select count(*) from answered)::integer as answers,
            -- New memories, not the new versions an edit makes.
            (select count(*) from memory.memory_events as e
             where e.event = 'add' and e.created_at >= v_start and e.created_at < v_end
                and e.user_id in (select s.id from scope as s)
                and not exists (select 1 from memory.memories as o where o.superseded_by = e.memory_id)
            )::integer as memories_added,
            (select count(*) from answered as a where cardinality(a.used_memory_ids) > 0)::integer as with_memories,
            (select count(*) from answered as a where a.arm = 'memories' and a.helpful is not null)::integer
                as rated_memories,
            (select count(*) from answered as a where a.arm = 'memories' and a.helpful)::integer as helpful_memories,
            (select count(*) from answered as a where a.arm = 'holdout' and a.helpful is not null)::integer
                as rated_holdout,
            (select count(*) from answered as a where a.arm = 'holdout' and a.helpful)::integer as helpful_holdout,
            (select count(*) from active as a where exists (
                select 1 from memory_private.dashboard_visits as v
                where v.user_id = a.user_id and v.day >= v_month::date and v.day < (v_month + interval '1 month')::date
            ))::integer as dashboard_users,
            (select count(*) from kept where kept.many)::integer as many,
            (select count(*) from kept where kept.many and kept.retained)::integer as many_retained,
            (select count(*) from kept where not kept.many)::integer as fewer,
            (select count(*) from kept where not kept.many and kept.retained)::integer as fewer_retained,
            (select count(*) from live)::integer as live_memories,
            (select count(*) from live as l where exists (
                select 1 from memory.memories as o
                where o.content operator(extensions.%) l.content
                    and o.user_id = l.user_id and o.profile_id is not distinct from l.profile_id
                    and o.active and not o.archived and o.deleted_at is null
                    and (o.expires_at is null or o.expires_at > now())
                    and (o.created_at, o.id) < (l.created_at, l.id)
            ))::integer as duplicates
    )
    select v_month::date, f.active_users, f.answers, f.memories_added,
        round(10.0 * f.memories_added / nullif(f.answers, 0), 3), f.with_memories,
        round(f.with_memories::numeric / nullif(f.answers, 0), 3),
        f.rated_memories, round(f.helpful_memories::numeric / nullif(f.rated_memories, 0), 3),
        f.rated_holdout, round(f.helpful_holdout::numeric / nullif(f.rated_holdout, 0), 3),
        f.dashboard_users, round(f.dashboard_users::numeric / nullif(f.active_users, 0), 3),
        f.many, round(f.many_retained::numeric / nullif(f.many, 0), 3),
        f.fewer, round(f.fewer_retained::numeric / nullif(f.fewer, 0), 3),
        f.live_memories, round(f.duplicates::numeric / nullif(f.live_memories, 0), 3)
    from figures as f;
    perform set_config('pg_trgm.similarity_threshold', v_threshold, true);
end
$function$;

revoke all on function memory_private.success_metrics(date, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.success_metrics(date, uuid, integer) to authenticated, service_role;
