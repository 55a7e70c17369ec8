-- Why: seed 004's selection: live memories of one user and profile, pinned first, then by score
-- lifted by relevance to the query (words or meaning), at most memory_select_limit and within a
-- token budget (about four characters a token). The lift is computed only for memories that could
-- reach the top. Choosing is a read; a use is recorded with p_message_id or p_record.
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
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_profile uuid := coalesce(
        p_profile_id, (select p.id from memory.profiles as p where p.user_id = v_user and p.is_primary)
    );
    v_limit integer := coalesce(p_limit, (memory_private.setting('memory_select_limit'))::integer);
    v_budget integer := coalesce(p_token_budget, (memory_private.setting('memory_token_budget'))::integer);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
    -- Bounding needs a query whose rank is zero off its matches: one without negation.
    v_bounded boolean;
    v_chosen memory.selected_memory [];
begin
    if v_limit < 1 or v_limit > 50 or v_budget < 1 then
        raise exception using errcode = '22023', message = 'limit must be 1..50 and the token budget positive';
    end if;
    v_bounded := v_query is not null and strpos(v_query::text, '!') = 0;
    with near as (
        -- The memories nearest the query's meaning lift like lexical matches do.
        select n.memory_id, greatest(0, 1 - n.distance)::numeric as similarity
        from memory_private.vector_memories(v_user, p_query_embedding, v_limit) as n
    ),
    live as (
        select m.id, m.content, m.type, m.category, m.confidence, m.pinned, m.reference_count,
            m.last_referenced_at, m.search, n.similarity,
            memory_private.memory_score(
                t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
            ) as base_score
        from memory.memories as m
        join memory.memory_types as t on t.type = m.type
        left join near as n on n.memory_id = m.id
        where m.user_id = v_user and m.profile_id = v_profile
            and m.active and not m.archived and m.deleted_at is null
            and (m.expires_at is null or m.expires_at > now())
    ),
    -- The p_limit-th highest static score among unpinned memories (null: fewer of them, or no bound).
    bound as (
        select case when v_bounded then (
            select l.base_score from live as l where not l.pinned
            order by l.base_score desc offset v_limit - 1 limit 1
        ) end as threshold
    ),
    candidates as (
        select l.*,
            l.base_score * (1 + case when v_query is null and l.similarity is null then 0 else greatest(
                coalesce(ts_rank_cd(l.search, v_query)::numeric, 0),
                coalesce(extensions.word_similarity(p_query, l.content)::numeric, 0),
                coalesce(l.similarity, 0)
            ) end) as final_score,
            ceil(length(l.content) / 4.0)::integer + 2 as cost
        from live as l
        cross join bound as b
        where b.threshold is null or l.pinned or 2 * l.base_score >= b.threshold or l.search @@ v_query
            or l.similarity is not null
    ),
    ranked as (
        select c.*, row_number() over w as position, sum(c.cost) over w as spent
        from candidates as c
        window w as (order by c.pinned desc, c.final_score desc, c.id)
    )
    select coalesce(array_agg(row(
        r.id, r.content, r.type, r.category, r.confidence, r.pinned, r.reference_count,
        r.last_referenced_at, round(r.final_score, 4), r.cost
    )::memory.selected_memory order by r.position), '{}')
    into v_chosen
    from ranked as r
    where r.position <= v_limit and r.spent <= v_budget;
    if (p_record or p_message_id is not null) and cardinality(v_chosen) > 0 then
        perform memory_private.record_selection(array(select c.id from unnest(v_chosen) as c), p_message_id);
    end if;
    return query select * from unnest(v_chosen);
end
$$;

revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
