-- Seed 004's short memory references ("M-143"): each user's memories numbered from 1 in the order
-- written; the user's row keeps the last number given, so none is reused. A prompt's chosen
-- memories carry theirs (memory.selected_memory), for the chips.
alter table memory.memories add column number integer;

alter table memory.users add column memories_numbered integer not null default 0;

-- Memories written before this migration: numbered by when they were written. Their triggers are
-- off meanwhile: a number is no change to announce, to touch updated_at for, or to select by.
alter table memory.memories disable trigger user;

update memory.memories as m set number = n.number
from (
    select
        x.id,
        row_number() over (partition by x.user_id order by x.created_at, x.id) as number
    from memory.memories as x
) as n
where n.id = m.id;

alter table memory.memories enable trigger user;

update memory.users as u set memories_numbered = n.last
from (
    select
        m.user_id,
        max(m.number) as last
    from memory.memories as m
    group by m.user_id
) as n
where n.user_id = u.id;

alter table memory.memories alter column number set not null;

alter type memory.selected_memory add attribute number integer;

create unique index memories_user_id_number_key on memory.memories using btree (user_id, number);

alter table memory.memories add constraint memories_number_check check ((number > 0)) not valid;

alter table memory.memories validate constraint "memories_number_check";

alter table memory.memories add constraint memories_user_id_number_key unique using index memories_user_id_number_key;

alter table memory.users add constraint users_memories_numbered_check check ((memories_numbered >= 0)) not valid;

alter table memory.users validate constraint "users_memories_numbered_check";

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
set plan_cache_mode to 'force_generic_plan'
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
    -- Each lifted memory's lift, by id: looked up per scored memory, where joining the lifts as a
    -- set (their count unknown to the plan) compared every scored memory with every lift.
    v_lifts jsonb := '{}';
    v_pool uuid [];
    v_bound numeric;
    v_bound_id uuid;
    v_best memory.selected_memory [];
    v_keep integer;
    v_count integer;
    v_last numeric;
    v_last_id uuid;
    v_all_pinned boolean;
    -- The sides the query has: its words (a text of stop words has none) and its embedding.
    v_sides integer;
begin
    if v_limit < 1 or v_limit > 50 or v_budget < 1 then
        raise exception using errcode = '22023', message = 'limit must be 1..50 and the token budget positive';
    end if;
    -- The query's lift, only when there is a query: joining empty retrieval sides still cost every
    -- memory of the profile a pass through two hash joins.
    if p_query is not null or p_query_embedding is not null then
        v_sides := (cardinality(memory_private.query_terms(p_query)) > 0)::integer
            + (p_query_embedding is not null)::integer;
        select coalesce(array_agg(x.memory_id), '{}'), coalesce(jsonb_object_agg(x.memory_id, x.lift), '{}')
        into v_lifted, v_lifts
        from (
            select
                coalesce(l.memory_id, n.memory_id) as memory_id,
                ((coalesce(l.relevance, 0) + coalesce(n.nearness, 0)) / v_sides)::numeric as lift
            from (
                select l.memory_id, l.relevance
                from memory_private.lexical_memories(v_user, p_query, null, v_profile) as l
                where p_query is not null
            ) as l
            full join (
                -- The memories nearest the query's meaning.
                select n.memory_id,
                    memory_private.nearness(n.distance, min(n.distance) over (), max(n.distance) over ()) as nearness
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
        -- Each memory of the pool and of the lift once, read by id (`id = any`, an index condition
        -- whatever the statistics: joined to the pool as a set, a small table's generic plan scanned
        -- every user's memories for each call), with its lift: the pool's size is the cost.
        with scored as (
            select m.id, m.content, m.type, m.category, m.confidence, m.pinned, m.reference_count,
                m.last_referenced_at, m.number,
                memory_private.memory_score(
                    t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
                ) * (1 + coalesce((v_lifts ->> m.id::text)::numeric, 0)) as final_score,
                ceil(length(m.content) / 4.0)::integer + 2 as cost
            from memory.memories as m
            join memory.memory_types as t on t.type = m.type
            -- The owner and profile are filters, never index conditions: the statistics of an
            -- ordinary profile would have the planner read all of a large one's memories instead.
            where m.id = any(v_pool || v_lifted)
                and m.user_id is not distinct from v_user and m.profile_id is not distinct from v_profile
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
            r.last_referenced_at, round(r.final_score, 4), r.cost, r.number
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
        perform memory_private.record_selection(array(select c.id from unnest(v_chosen) as c), p_message_id, v_user);
    end if;
    return query select * from unnest(v_chosen);
end
$function$;

create or replace function memory_private.memory_defaults()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_reason text;
    v_message memory.messages;
begin
    if tg_op = 'INSERT' then
        -- The user's next number: the user's row, locked until commit, orders concurrent writers.
        update memory.users as u set memories_numbered = u.memories_numbered + 1 where u.id = new.user_id
        returning u.memories_numbered into new.number;
    end if;
    -- Another user's row is RLS's to refuse (42501); resolve nothing for it here. Cascades
    -- (an owner deleting a together conversation) run as postgres with the caller's claims.
    if (select auth.uid()) is not null and new.user_id is distinct from (select auth.uid()) then
        return new;
    end if;
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if new.source_message_id is not null
        and (tg_op = 'INSERT' or new.source_message_id is distinct from old.source_message_id) then
        v_reason := memory_private.memory_gate(new.user_id, new.source_message_id);
        if v_reason is not null then
            raise exception using errcode = '42501', message = 'memory not allowed: ' || v_reason;
        end if;
        select m.* into v_message from memory.messages as m where m.id = new.source_message_id;
        new.source_conversation_id := v_message.conversation_id;
        new.turn_index := v_message.turn_number;
        new.origin_mode := (select c.mode from memory.conversations as c where c.id = v_message.conversation_id);
    end if;
    new.profile_id := memory_private.memory_profile(new.user_id, new.source_message_id, new.profile_id);
    if new.profile_id is null then
        raise exception using errcode = '23502', message = 'memory needs a profile',
            hint = 'Create a primary profile for the user, or pass one.';
    end if;
    return new;
end
$function$;

revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.memory_defaults() from public, anon, authenticated, service_role;
