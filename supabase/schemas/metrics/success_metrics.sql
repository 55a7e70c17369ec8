-- Why: seed 004's success metrics for one month (UTC), over every user or one tenant's:
-- - memory creation rate: memories added per 10 answered turns (target 0.5-2.0);
-- - memory reference rate: the share of answers given memories (target 30 %+);
-- - reference uplift: the share of rated answers rated helpful in the chat's A/B arms, with the
--   memories selected and with them held out (`memory_arm` in the answer's metadata);
-- - dashboard engagement: the share of the month's active users (an answer in the month) who opened
--   the memory dashboard in it (target 20 %);
-- - retention impact: of the month's active users, those keeping at least p_many memories at its
--   end (created before it, not deleted by then) and the others, and how many of each were active
--   again the month after (the month after still running, it counts so far);
-- - memory quality: the share of live memories that near-duplicate an older live memory of their
--   profile (trigram similarity >= dedup_threshold, the dedup's own measure), now (target < 10 %).
-- Rates are null where their count is 0. The service role reads every user or names a tenant; a
-- tenant admin names a tenant they administer; anyone else is refused (42501).
create type memory.success_metrics_report as (
    month date,
    active_users integer,
    answers integer,
    memories_added integer,
    memories_per_10_turns numeric,
    answers_with_memories integer,
    reference_rate numeric,
    rated_with_memories integer,
    helpful_with_memories numeric,
    rated_held_out integer,
    helpful_held_out numeric,
    dashboard_users integer,
    dashboard_engagement numeric,
    users_with_many_memories integer,
    retained_with_many_memories numeric,
    users_with_fewer_memories integer,
    retained_with_fewer_memories numeric,
    live_memories integer,
    duplicate_rate numeric
);

comment on type memory.success_metrics_report is 'A month of seed 004''s success metrics (memory.success_metrics).';

create function memory.success_metrics(
    p_month date default null, p_tenant_id uuid default null, p_many integer default 50
)
returns setof memory.success_metrics_report
language plpgsql
set search_path = ''
as $$
begin
    return query select * from memory_private.success_metrics(p_month, p_tenant_id, p_many);
end
$$;

revoke all on function memory.success_metrics(date, uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory.success_metrics(date, uuid, integer) to authenticated, service_role;

-- Why: memory.success_metrics' body, run as the owner: the figures span users no policy shows one
-- caller, so the caller's right to them is checked here, once.
create function memory_private.success_metrics(p_month date, p_tenant_id uuid, p_many integer)
returns setof memory.success_metrics_report
language plpgsql
security definer
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.success_metrics(date, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.success_metrics(date, uuid, integer) to authenticated, service_role;
