-- Memory selections kept ahead of the prompt: each profile's candidates and the bound no other live
-- memory exceeds, kept by the memory write paths and rebuilt by a minutely refresh; select_memories
-- scores the candidates and reads every live memory only when they cannot prove the answer.
create table memory_private.memory_selections (
    profile_id uuid not null,
    candidates uuid[] not null default '{}'::uuid[],
    bound numeric,
    bound_id uuid,
    stale_at timestamp with time zone not null default now()
);


alter table memory_private.memory_selections enable row level security;

create unique index memory_selections_pkey on memory_private.memory_selections using btree (profile_id);

create index memory_selections_stale_at_idx on memory_private.memory_selections using btree (stale_at);

alter table memory_private.memory_selections
add constraint memory_selections_pkey primary key using index memory_selections_pkey;

alter table memory_private.memory_selections add constraint memory_selections_profile_id_fkey foreign key (
    profile_id
) references memory.profiles (id) on delete cascade not valid;

alter table memory_private.memory_selections validate constraint "memory_selections_profile_id_fkey";

set check_function_bodies = off;

create or replace function memory_private.memory_selection_changed()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_new memory.memories [] := '{}';
    v_old memory.memories [] := '{}';
begin
    if tg_op <> 'DELETE' then
        v_new := array(select n from new_memories as n where n.profile_id is not null);
    end if;
    if tg_op <> 'INSERT' then
        v_old := array(select o from old_memories as o where o.profile_id is not null);
    end if;
    perform 1 from memory_private.memory_selections as s
    where s.profile_id in (select x.profile_id from unnest(v_new || v_old) as x)
    order by s.profile_id
    for update;
    with standing as (
        select x.side, x.id, x.profile_id, x.pinned,
            x.active and not x.archived and x.deleted_at is null and (x.expires_at is null or x.expires_at > now())
            as live,
            memory_private.memory_score(
                t.weight, x.confidence, x.last_referenced_at, x.created_at, x.reference_count, now()
            ) as score
        from (
            select 'new' as side, n.* from unnest(v_new) as n
            union all
            select 'old' as side, o.* from unnest(v_old) as o
        ) as x
        join memory.memory_types as t on t.type = x.type
    ),
    paired as (
        select n.id as new_id, n.profile_id as new_profile, n.live as new_live, n.pinned as new_pinned,
            n.score as new_score, o.id as old_id, o.profile_id as old_profile, o.live as old_live,
            o.pinned as old_pinned, o.score as old_score
        from (select * from standing where side = 'new') as n
        full join (select * from standing where side = 'old') as o on o.id = n.id
    ),
    changes as (
        select p.new_profile as profile_id, p.new_id as added, false as stale
        from paired as p
        join memory_private.memory_selections as s on s.profile_id = p.new_profile
        where p.new_live and not p.new_id = any(s.candidates)
            and (s.bound is null or p.new_pinned or p.new_score > s.bound
                or (p.new_score = s.bound and p.new_id < s.bound_id))
        union all
        select p.old_profile, null, true
        from paired as p
        join memory_private.memory_selections as s on s.profile_id = p.old_profile
        where p.old_live and p.old_id = any(s.candidates) and s.bound is not null
            and (p.new_id is null or not p.new_live or p.new_profile is distinct from p.old_profile
                or (p.old_pinned and not p.new_pinned) or p.new_score < p.old_score)
    )
    update memory_private.memory_selections as s
    set candidates = s.candidates || c.added,
        -- A selection of all live memories is trimmed to its best by the next refresh.
        stale_at = case when c.stale or s.bound is null then least(s.stale_at, now()) else s.stale_at end
    from (
        select c.profile_id, coalesce(array_agg(c.added) filter (where c.added is not null), '{}') as added,
            bool_or(c.stale) as stale
        from changes as c
        group by c.profile_id
    ) as c
    where s.profile_id = c.profile_id;
    return null;
end
$function$;

create or replace function memory_private.memory_type_weight_changed()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    update memory_private.memory_selections as s
    set bound = 'Infinity', bound_id = null, stale_at = least(s.stale_at, now())
    where s.bound is not null and s.bound <> 'Infinity';
    return null;
end
$function$;

create or replace function memory_private.refresh_memory_selection(p_profile_id uuid)
returns void
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_limit integer := (memory_private.setting('memory_select_limit'))::integer;
    v_candidates uuid [];
    v_bound numeric;
    v_bound_id uuid;
    v_pins integer;
    v_expires timestamptz;
    v_stale timestamptz;
begin
    select coalesce(array_agg(r.id) filter (where r.chosen), '{}'),
        (array_agg(r.score order by r.score desc, r.id) filter (where not r.chosen))[1],
        (array_agg(r.id order by r.score desc, r.id) filter (where not r.chosen))[1],
        count(*) filter (where r.pinned), min(r.expires_at) filter (where r.chosen)
    into v_candidates, v_bound, v_bound_id, v_pins, v_expires
    from (
        select l.*, l.pinned or row_number() over (partition by l.pinned order by l.score desc, l.id) <= 2 * v_limit
            as chosen
        from (
            select m.id, m.pinned, m.expires_at,
                memory_private.memory_score(
                    t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
                ) as score
            from memory.memories as m
            join memory.memory_types as t on t.type = m.type
            where m.profile_id = p_profile_id and m.active and not m.archived and m.deleted_at is null
                and (m.expires_at is null or m.expires_at > now())
        ) as l
    ) as r;
    if v_bound is not null and v_limit > v_pins then
        -- When the (limit - pins)-th latest of the unpinned candidates falls to the bound.
        select f.falls into v_stale
        from (
            select case
                when c.a / 31 + c.b > v_bound then 'infinity'
                when c.a = 0 or c.b >= v_bound then c.since
                else c.since + make_interval(secs => ((c.a / (v_bound - c.b) - 1) * 86400)::float8)
            end as falls
            from (
                select t.weight * m.confidence as a, 0.1 * m.reference_count as b,
                    coalesce(m.last_referenced_at, m.created_at) as since
                from memory.memories as m
                join memory.memory_types as t on t.type = m.type
                where m.id = any(v_candidates) and not m.pinned
            ) as c
        ) as f
        order by f.falls desc
        offset v_limit - v_pins - 1 limit 1;
    end if;
    update memory_private.memory_selections as s
    set candidates = v_candidates, bound = v_bound, bound_id = v_bound_id, stale_at = least(coalesce(v_stale, 'infinity'), v_expires)
    where s.profile_id = p_profile_id;
end
$function$;

create or replace function memory_private.refresh_memory_selections(p_limit integer default 200)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_profile uuid;
    v_count integer := 0;
begin
    if p_limit is null or p_limit < 1 then
        raise exception using errcode = '22023', message = 'limit must be positive';
    end if;
    for v_profile in
        select s.profile_id from memory_private.memory_selections as s
        where s.stale_at <= now()
        order by s.stale_at
        limit p_limit
        for update skip locked
    loop
        perform memory_private.refresh_memory_selection(v_profile);
        v_count := v_count + 1;
    end loop;
    return v_count;
end
$function$;

create or replace function memory_private.start_memory_selections()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    insert into memory_private.memory_selections (profile_id, bound, stale_at)
    select p.id, null, 'infinity' from new_profiles as p;
    return null;
end
$function$;

create or replace function memory.select_memories(
    p_user_id uuid default null::uuid,
    p_profile_id uuid default null::uuid,
    p_query text default null::text,
    p_limit integer default null::integer,
    p_token_budget integer default null::integer,
    p_message_id bigint default null::bigint,
    p_record boolean default false,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.selected_memory
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_profile uuid := coalesce(
        p_profile_id, (select p.id from memory.profiles as p where p.user_id = v_user and p.is_primary)
    );
    v_limit integer := coalesce(p_limit, (memory_private.setting('memory_select_limit'))::integer);
    v_budget integer := coalesce(p_token_budget, (memory_private.setting('memory_token_budget'))::integer);
    v_chosen memory.selected_memory [];
    v_lifted uuid [] := '{}';
    v_lifts numeric [] := '{}';
    v_pool uuid [];
    v_bound numeric;
    v_bound_id uuid;
    v_best memory.selected_memory [];
    v_keep integer;
    v_count integer;
    v_last numeric;
    v_last_id uuid;
    v_all_pinned boolean;
begin
    if v_limit < 1 or v_limit > 50 or v_budget < 1 then
        raise exception using errcode = '22023', message = 'limit must be 1..50 and the token budget positive';
    end if;
    -- The query's lift, only when there is a query: joining empty retrieval sides still cost every
    -- memory of the profile a pass through two hash joins.
    if p_query is not null or p_query_embedding is not null then
        select coalesce(array_agg(x.memory_id), '{}'), coalesce(array_agg(x.lift), '{}')
        into v_lifted, v_lifts
        from (
            select
                coalesce(l.memory_id, n.memory_id) as memory_id,
                greatest(coalesce(l.relevance, 0), coalesce(n.similarity, 0))::numeric as lift
            from (
                select l.memory_id, l.relevance from memory_private.lexical_memories(v_user, p_query, null) as l
                where p_query is not null
            ) as l
            full join (
                -- The memories nearest the query's meaning.
                select n.memory_id, greatest(0, 1 - n.distance) as similarity
                from memory_private.vector_memories(v_user, p_query_embedding, v_limit) as n
                where p_query_embedding is not null
            ) as n on n.memory_id = l.memory_id
        ) as x;
    end if;
    select s.candidates, s.bound, s.bound_id into v_pool, v_bound, v_bound_id
    from memory_private.memory_selections as s
    where s.profile_id = v_profile and s.bound is distinct from 'Infinity';
    loop
        if v_pool is null then
            v_pool := array(
                select m.id from memory.memories as m
                where m.user_id = v_user and m.profile_id = v_profile
                    and m.active and not m.archived and m.deleted_at is null
            );
            v_bound := null;
        end if;
        -- Each memory of the pool and of the lift once, with its lift, probed by id: the pool's
        -- size is the cost.
        with pool as (
            select u.id, max(u.lift) as lift
            from (
                select c.id, 0::numeric as lift from unnest(v_pool) as c (id)
                union all
                select l.id, l.lift from unnest(v_lifted, v_lifts) as l (id, lift)
            ) as u
            group by u.id
        ),
        scored as (
            select m.id, m.content, m.type, m.category, m.confidence, m.pinned, m.reference_count,
                m.last_referenced_at,
                memory_private.memory_score(
                    t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
                ) * (1 + l.lift) as final_score,
                ceil(length(m.content) / 4.0)::integer + 2 as cost
            from pool as l
            join memory.memories as m on m.id = l.id
            join memory.memory_types as t on t.type = m.type
            -- Filters, never index conditions: the pool is read by id, where the statistics of an
            -- ordinary profile would have the planner read all of a large one's memories instead.
            where m.user_id is not distinct from v_user and m.profile_id is not distinct from v_profile
                and m.active and not m.archived and m.deleted_at is null
                and (m.expires_at is null or m.expires_at > now())
        ),
        -- The best v_limit first (a top-N sort), then the budget over just those.
        best as (
            select c.* from scored as c order by c.pinned desc, c.final_score desc, c.id limit v_limit
        ),
        ranked as (
            select c.*, row_number() over w as position, sum(c.cost) over w as spent
            from best as c
            window w as (order by c.pinned desc, c.final_score desc, c.id)
        )
        select coalesce(array_agg(row(
            r.id, r.content, r.type, r.category, r.confidence, r.pinned, r.reference_count,
            r.last_referenced_at, round(r.final_score, 4), r.cost
        )::memory.selected_memory order by r.position), '{}'),
            count(*) filter (where r.spent <= v_budget), count(*),
            (array_agg(r.final_score order by r.position desc))[1], (array_agg(r.id order by r.position desc))[1],
            coalesce(bool_and(r.pinned), true)
        into v_best, v_keep, v_count, v_last, v_last_id, v_all_pinned
        from ranked as r;
        -- Proven when no memory left out can outrank the last chosen: the pool was every live
        -- memory, or the last chosen is pinned or ranks before the bound of all the others.
        exit when v_bound is null or (
            v_count = v_limit and (v_all_pinned or v_last > v_bound or (v_last = v_bound and v_last_id < v_bound_id))
        );
        v_pool := null;
    end loop;
    v_chosen := v_best[1:v_keep];
    if (p_record or p_message_id is not null) and cardinality(v_chosen) > 0 then
        perform memory_private.record_selection(array(select c.id from unnest(v_chosen) as c), p_message_id);
    end if;
    return query select * from unnest(v_chosen);
end
$function$;

grant select on table memory_private.memory_selections to authenticated;

grant select on table memory_private.memory_selections to service_role;

create policy "Readers of the profile read its selection"
on memory_private.memory_selections
as permissive
for select
to authenticated
using ((exists (
    select 1
    from memory.profiles as p
    where (p.id = memory_selections.profile_id)
)));


create trigger memories_selection_deleted
after delete on memory.memories
referencing old table as old_memories
for each statement execute function memory_private.memory_selection_changed();

create trigger memories_selection_inserted
after insert on memory.memories
referencing new table as new_memories
for each statement execute function memory_private.memory_selection_changed();

create trigger memories_selection_updated
after update on memory.memories
referencing old table as old_memories new table as new_memories
for each statement execute function memory_private.memory_selection_changed();

create trigger memory_types_weight_changed
after update of weight on memory.memory_types
for each statement execute function memory_private.memory_type_weight_changed();

create trigger profiles_start_memory_selections
after insert on memory.profiles
referencing new table as new_profiles
for each statement execute function memory_private.start_memory_selections();


revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.memory_selection_changed() from public, anon, authenticated, service_role;
revoke all on function memory_private.memory_type_weight_changed() from public, anon, authenticated, service_role;
revoke all on function memory_private.refresh_memory_selection(uuid) from public, anon, authenticated, service_role;
revoke all on function memory_private.refresh_memory_selections(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.refresh_memory_selections(integer) to service_role;
revoke all on function memory_private.start_memory_selections() from public, anon, authenticated, service_role;
comment on table memory_private.memory_selections is 'Each profile''s candidate memories for selection and the score no other live memory exceeds.';

-- Every existing profile starts unbuilt; the refresh builds them, most overdue first.
insert into memory_private.memory_selections (profile_id, bound, stale_at)
select
    p.id,
    'Infinity' as bound,
    now() as stale_at
from memory.profiles as p;

insert into memory_private.schedules (name, schedule, command) values
('supamem-refresh-memory-selections', '* * * * *', 'select memory_private.refresh_memory_selections()');
select memory_private.schedule_jobs();
