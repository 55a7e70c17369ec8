-- Why: seed 004's selection: live memories of one user and profile, pinned first, then by score
-- lifted by relevance to the query, at most memory_select_limit and within a token budget (about
-- four characters a token). The lift is the hybrid retrieval's, averaged over the sides the query
-- has: the share of the query's terms a memory holds, weighted by rarity among the profile's live
-- memories (lexical_memories' relevance), and its nearness among the memories nearest the query's
-- meaning (memory_private.nearness); a memory neither side finds keeps its score, and one both
-- find rises most. Choosing is a read; a use is recorded with p_message_id or p_record. The
-- profile's selection (memory_private.memory_selections and its notes) names the few memories that
-- can be chosen: they and what the query lifts are scored, and every live memory only when they
-- cannot prove the answer. Its statements keep their generic plans, which read the pool by id: a
-- custom plan for a pool of 20 scanned a memories table of a few hundred pages instead, and
-- planning the statement for every live memory's ids cost about a millisecond.
create function memory.select_memories(
    p_user_id uuid default null,
    p_profile_id uuid default null,
    p_query text default null,
    p_limit integer default null,
    p_token_budget integer default null,
    p_message_id bigint default null,
    p_record boolean default false,
    p_query_embedding extensions.vector default null
)
returns setof memory.selected_memory
language plpgsql
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
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
$$;

revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
