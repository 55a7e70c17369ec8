-- Why: seed 004's observability and success metrics, per user and day (UTC) since p_since (30 days
-- by default): answers given, answers that used memories (the reference rate), answers whose
-- memories were held out (the chat's A/B arm, `memory_arm` in the answer's metadata), memories
-- added, references (a memory used in an answer, or met again as a duplicate), and turns
-- extracted (the creation rate per turn). A signed-in user reads their own; a tenant admin names a
-- user of their tenant; the service role names a user or, with none, reads every user. Runs with
-- the caller's rights, so RLS has the last word; its plan is made for the arguments given (one user
-- through the user indexes, or everyone).
create function memory.memory_metrics(p_since timestamptz default null, p_user_id uuid default null)
returns table (
    user_id uuid,
    day date,
    answers integer,
    answers_with_memories integer,
    answers_held_out integer,
    memories_added integer,
    memory_references integer,
    extractions integer
)
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_custom_plan
as $$
declare
    v_uid uuid := (select auth.uid());
    v_user uuid := coalesce(p_user_id, v_uid);
    v_since timestamptz := coalesce(p_since, now() - interval '30 days');
begin
    -- Another user's figures only for their tenant's admin (the messages policy would also show a
    -- participant the owner's answers in their shared conversations).
    if v_uid is not null and v_user <> v_uid and not exists (
        select 1 from memory.users as u
        where u.id = v_user and u.tenant_id = any((select memory_private.administered_tenants())::uuid[])
    ) then
        return;
    end if;
    return query
    with answers as (
        select m.user_id, (m.created_at at time zone 'UTC')::date as day, count(*)::integer as answers,
            count(*) filter (where cardinality(m.used_memory_ids) > 0)::integer as with_memories,
            count(*) filter (where m.metadata ->> 'memory_arm' = 'holdout')::integer as held_out
        from memory.messages as m
        where m.role = 'assistant' and m.created_at >= v_since and (v_user is null or m.user_id = v_user)
        group by 1, 2
    ),
    changes as (
        select e.user_id, (e.created_at at time zone 'UTC')::date as day,
            count(*) filter (where e.event = 'add')::integer as added,
            count(*) filter (where e.event = 'reference')::integer as referenced
        from memory.memory_events as e
        where e.event in ('add', 'reference') and e.created_at >= v_since and (v_user is null or e.user_id = v_user)
        group by 1, 2
    ),
    extracted as (
        select x.user_id, (x.created_at at time zone 'UTC')::date as day, count(*)::integer as extractions
        from memory.memory_extractions as x
        where x.created_at >= v_since and (v_user is null or x.user_id = v_user)
        group by 1, 2
    )
    select coalesce(a.user_id, c.user_id, x.user_id), coalesce(a.day, c.day, x.day), coalesce(a.answers, 0),
        coalesce(a.with_memories, 0), coalesce(a.held_out, 0), coalesce(c.added, 0), coalesce(c.referenced, 0),
        coalesce(x.extractions, 0)
    from answers as a
    full join changes as c on c.user_id = a.user_id and c.day = a.day
    full join extracted as x on x.user_id = coalesce(a.user_id, c.user_id) and x.day = coalesce(a.day, c.day)
    order by 1, 2;
end
$$;

revoke all on function memory.memory_metrics(timestamptz, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.memory_metrics(timestamptz, uuid) to authenticated, service_role;
