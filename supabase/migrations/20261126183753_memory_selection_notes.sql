-- Memory writes note what they lift instead of locking and updating the profile's selection, so
-- concurrent writers of one profile (an answer reinforcing the memories it used, an extraction
-- remembering) never wait on each other for it; the refresh takes the notes with its scan.
create table memory_private.memory_selection_notes (
    id bigint generated always as identity not null,
    profile_id uuid not null,
    memory_id uuid
);


alter table memory_private.memory_selection_notes enable row level security;

create unique index memory_selection_notes_pkey on memory_private.memory_selection_notes using btree (id);

create index memory_selection_notes_profile_id_idx on memory_private.memory_selection_notes using btree (profile_id);

alter table memory_private.memory_selection_notes
add constraint memory_selection_notes_pkey primary key using index memory_selection_notes_pkey;

alter table memory_private.memory_selection_notes add constraint memory_selection_notes_profile_id_fkey foreign key (
    profile_id
) references memory.profiles (id) on delete cascade not valid;

alter table memory_private.memory_selection_notes validate constraint "memory_selection_notes_profile_id_fkey";

set check_function_bodies = off;

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
    select s.candidates || array(
        select distinct n.memory_id from memory_private.memory_selection_notes as n
        where n.profile_id = v_profile and n.memory_id is not null
    ), s.bound, s.bound_id
    into v_pool, v_bound, v_bound_id
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
    )
    -- A note for every such write, even of a memory noted before: a refresh takes the notes it can
    -- see with the memories it scans, so skipping a note because another exists could leave this
    -- write unnoted after a refresh that did not see it.
    insert into memory_private.memory_selection_notes (profile_id, memory_id)
    select x.profile_id, x.memory_id
    from (
        select p.new_profile as profile_id, p.new_id as memory_id
        from paired as p
        where p.new_live
            and (p.old_id is null or not p.old_live or p.old_profile is distinct from p.new_profile
                or (p.new_pinned and not p.old_pinned) or p.new_score > p.old_score)
        union all
        select distinct p.old_profile, null::uuid
        from paired as p
        join memory_private.memory_selections as s on s.profile_id = p.old_profile
        where p.old_live and p.old_id = any(s.candidates) and s.bound is not null
            and (p.new_id is null or not p.new_live or p.new_profile is distinct from p.old_profile
                or (p.old_pinned and not p.new_pinned) or p.new_score < p.old_score)
    ) as x;
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
    -- The notes go in the statement that scans the memories: the ones it cannot see (a write not yet
    -- committed) stay, and name what this scan missed.
    with taken as (
        delete from memory_private.memory_selection_notes as n where n.profile_id = p_profile_id
    )
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
    set candidates = v_candidates, bound = v_bound, bound_id = v_bound_id,
        stale_at = least(coalesce(v_stale, 'infinity'), v_expires)
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
    v_limit integer := (memory_private.setting('memory_select_limit'))::integer;
    v_profile uuid;
    v_count integer := 0;
begin
    if p_limit is null or p_limit < 1 then
        raise exception using errcode = '22023', message = 'limit must be positive';
    end if;
    for v_profile in
        select s.profile_id from memory_private.memory_selections as s
        where s.stale_at <= now() or s.profile_id in (
            -- A candidate left or fell, or the noted memories outnumber the candidates a build keeps.
            select n.profile_id from memory_private.memory_selection_notes as n
            group by n.profile_id
            having bool_or(n.memory_id is null) or count(*) > 2 * v_limit
        )
        order by s.stale_at
        limit p_limit
        for update of s skip locked
    loop
        perform memory_private.refresh_memory_selection(v_profile);
        v_count := v_count + 1;
    end loop;
    return v_count;
end
$function$;

grant select on table memory_private.memory_selection_notes to authenticated;

grant select on table memory_private.memory_selection_notes to service_role;

create policy "Readers of the profile read its selection notes"
on memory_private.memory_selection_notes
as permissive
for select
to authenticated
using ((exists (
    select 1
    from memory.profiles as p
    where (p.id = memory_selection_notes.profile_id)
)));


revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.memory_selection_changed() from public, anon, authenticated, service_role;
revoke all on function memory_private.refresh_memory_selection(uuid) from public, anon, authenticated, service_role;
revoke all on function memory_private.refresh_memory_selections(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.refresh_memory_selections(integer) to service_role;
comment on table memory_private.memory_selection_notes is
'Memories written since their profile''s selection was built: candidates until the next build.';
