-- Hybrid retrieval: the lexical ranking (BM25) and the vector ranking fused by reciprocal rank.
--
-- Why: BM25 finds the words of the query; the embedding finds what they mean. Each search
-- function takes the query's embedding (computed by the caller with the current model, as the
-- embed jobs compute the rows') and fuses the two rankings with reciprocal rank fusion,
-- score = sum over rankings of 1 / (60 + rank), the constant of Cormack, Clarke and Buettcher
-- (2009), not one fitted to any data set; equal scores share a rank. Without an embedding a
-- search is lexical, as before; rows without a vector yet are still found lexically.
-- * The vector side reads the user's vectors of the current model through that model's HNSW
--   index with pgvector's iterative scan (so a filter on the user still yields enough rows), or,
--   within one conversation, the conversation's messages exactly; the user filter is in the
--   statement, so no plan returns another user's rows, and RLS holds on the vectors as well.
-- * search_messages, search_memories and select_memories (and so prompt_context) take
--   p_query_embedding; the old signatures are replaced, the grants restated.

-- The query embedding must match the current model's dimensions.
create function memory_private.check_query_embedding(p_embedding extensions.vector)
returns integer
language plpgsql
stable
set search_path = ''
as $$
declare
    v_dimensions integer := (memory_private.setting('embedding_dimensions'))::integer;
begin
    if p_embedding is not null and extensions.vector_dims(p_embedding) <> v_dimensions then
        raise exception using errcode = '22023',
            message = format(
                'the query embedding has %s dimensions; the embedding model %s has %s',
                extensions.vector_dims(p_embedding), memory_private.setting('embedding_model') ->> 0, v_dimensions
            );
    end if;
    return v_dimensions;
end
$$;

-- The user's messages nearest to the embedding (cosine distance), at most p_limit.
create function memory_private.vector_messages(
    p_user_id uuid, p_embedding extensions.vector, p_conversation_id uuid default null, p_limit integer default 50
)
returns table (message_id bigint, distance double precision)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
    v_model text := memory_private.setting('embedding_model') ->> 0;
begin
    if p_embedding is null then
        return;
    end if;
    if p_conversation_id is not null then
        -- One conversation: exact, over its messages.
        return query execute format(
            'select e.message_id, (e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1)::double precision
            from memory.messages as m
            join memory_private.message_embeddings as e on e.message_id = m.id
            where m.conversation_id = $3 and m.user_id = $2 and e.model = %2$L
            order by 2, 1
            limit $4',
            v_dimensions, v_model
        ) using p_embedding, p_user_id, p_conversation_id, p_limit;
        return;
    end if;
    -- The model's partial HNSW index; relaxed order, so the nearest are sorted again.
    return query execute format(
        'with nearest as materialized (
            select e.message_id, (e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1)::double precision as distance
            from memory_private.message_embeddings as e
            where e.user_id = $2 and e.model = %2$L
            order by e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1
            limit $3
        )
        select n.message_id, n.distance from nearest as n order by 2, 1',
        v_dimensions, v_model
    ) using p_embedding, p_user_id, p_limit;
end
$$;

-- The user's memories nearest to the embedding (cosine distance), at most p_limit.
create function memory_private.vector_memories(
    p_user_id uuid, p_embedding extensions.vector, p_limit integer default 50
)
returns table (memory_id uuid, distance double precision)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
begin
    if p_embedding is null then
        return;
    end if;
    return query execute format(
        'with nearest as materialized (
            select e.memory_id, (e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1)::double precision as distance
            from memory_private.memory_embeddings as e
            where e.user_id = $2 and e.model = %2$L
            order by e.embedding::extensions.vector(%1$s) operator(extensions.<=>) $1
            limit $3
        )
        select n.memory_id, n.distance from nearest as n order by 2, 1',
        v_dimensions, memory_private.setting('embedding_model') ->> 0
    ) using p_embedding, p_user_id, p_limit;
end
$$;

-- pgvector's iterative scan: a filtered HNSW scan goes on until it has enough of the user's rows.
alter function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
set "hnsw.iterative_scan" = 'relaxed_order';
alter function memory_private.vector_memories(uuid, extensions.vector, integer)
set "hnsw.iterative_scan" = 'relaxed_order';

revoke all on function memory_private.check_query_embedding(extensions.vector) from public, anon;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer) from public, anon;
revoke all on function memory_private.vector_memories(uuid, extensions.vector, integer) from public, anon;
grant execute on function memory_private.check_query_embedding(extensions.vector) to authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
grant execute on function memory_private.vector_memories(uuid, extensions.vector, integer)
to authenticated, service_role;

drop function memory.search_messages(text, uuid, uuid, integer, integer);
create function memory.search_messages(
    p_query text,
    p_user_id uuid default null,
    p_conversation_id uuid default null,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null
)
returns setof memory.messages
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_depth integer;
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    -- Each ranking goes deeper than the page, so fusion can promote what one side ranks lower.
    v_depth := greatest(p_limit + p_offset, 50);
    return query
    with by_text as (
        select l.message_id as id, l.score
        from memory_private.lexical_messages(v_user, p_query, p_conversation_id, v_depth) as l
    ),
    by_memory as (
        select mm.source_message_id as id, max(l.score) as score
        from memory_private.lexical_memories(v_user, p_query, v_depth) as l
        join memory.memories as mm on mm.id = l.memory_id
        where mm.source_message_id is not null
            and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        group by mm.source_message_id
    ),
    lexical as (
        select coalesce(t.id, v.id) as id,
            rank() over (order by coalesce(t.score, 0) + coalesce(v.score, 0) desc) as rank
        from by_text as t
        full join by_memory as v on v.id = t.id
    ),
    -- A message is as near as it or the nearest memory drawn from it.
    semantic as (
        select x.id, rank() over (order by min(x.distance)) as rank
        from (
            select n.message_id as id, n.distance
            from memory_private.vector_messages(v_user, p_query_embedding, p_conversation_id, v_depth) as n
            union all
            select mm.source_message_id, n.distance
            from memory_private.vector_memories(v_user, p_query_embedding, v_depth) as n
            join memory.memories as mm on mm.id = n.memory_id
            where mm.source_message_id is not null
                and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        ) as x
        group by x.id
    ),
    fused as (
        select coalesce(l.id, s.id) as id,
            coalesce(1.0 / (60 + l.rank), 0) + coalesce(1.0 / (60 + s.rank), 0) as score
        from lexical as l
        full join semantic as s on s.id = l.id
    )
    select m.*
    from fused as f
    join memory.messages as m on m.id = f.id
    where m.user_id = v_user and (m.expires_at is null or m.expires_at > now())
    order by f.score desc, m.id
    limit p_limit offset p_offset;
end
$$;
revoke all on function memory.search_messages(text, uuid, uuid, integer, integer, extensions.vector) from public, anon;
grant execute on function memory.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;

drop function memory.search_memories(
    text, uuid, text, text, uuid, uuid, timestamp with time zone, timestamp with time zone, text, integer, integer
);
create function memory.search_memories(
    p_query text default null,
    p_user_id uuid default null,
    p_type text default null,
    p_category text default null,
    p_profile_id uuid default null,
    p_conversation_id uuid default null,
    p_created_from timestamp with time zone default null,
    p_created_to timestamp with time zone default null,
    p_status text default 'active',
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null
)
returns setof memory.memories
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
    -- The vector side only ranks a text query.
    v_embedding extensions.vector := case when p_query is not null then p_query_embedding end;
begin
    if p_status is null or p_status not in ('active', 'archived', 'deleted', 'superseded', 'all') then
        raise exception using errcode = '22023', message = format('unknown status %L', p_status),
            hint = 'status is one of active, archived, deleted, superseded, all';
    end if;
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 100000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..100000';
    end if;
    if length(p_query) > 1000 then
        raise exception using errcode = '22023', message = 'a memory search is at most 1,000 characters';
    end if;
    return query
    with lexical as (
        select l.memory_id, rank() over (order by l.score desc) as rank
        from memory_private.lexical_memories(v_user, p_query, 1000) as l
    ),
    semantic as (
        select n.memory_id, rank() over (order by n.distance) as rank
        from memory_private.vector_memories(v_user, v_embedding, 100) as n
    ),
    fused as (
        select coalesce(l.memory_id, s.memory_id) as memory_id, s.memory_id is not null as near,
            coalesce(1.0 / (60 + l.rank), 0) + coalesce(1.0 / (60 + s.rank), 0) as score
        from lexical as l
        full join semantic as s on s.memory_id = l.memory_id
    )
    select m.*
    from memory.memories as m
    left join fused as r on r.memory_id = m.id
    where m.user_id = v_user
        and (
            p_query is null or m.search @@ v_query or extensions.word_similarity(p_query, m.content) >= 0.4
            or r.near
        )
        and (p_type is null or m.type = p_type)
        and (p_category is null or m.category = p_category)
        and (p_profile_id is null or m.profile_id = p_profile_id)
        and (p_conversation_id is null or m.source_conversation_id = p_conversation_id)
        and (p_created_from is null or m.created_at >= p_created_from)
        and (p_created_to is null or m.created_at < p_created_to)
        and case p_status
            when 'active' then m.active and not m.archived and (m.expires_at is null or m.expires_at > now())
            when 'archived' then m.archived and m.deleted_at is null
            when 'deleted' then m.deleted_at is not null
            when 'superseded' then m.superseded_by is not null
            else true
        end
    order by
        r.score desc nulls last,
        case when p_query is not null then extensions.word_similarity(p_query, m.content) else 0 end desc,
        m.created_at desc,
        m.id
    limit p_limit offset p_offset;
end
$$;
revoke all on function memory.search_memories(
    text, uuid, text, text, uuid, uuid, timestamp with time zone, timestamp with time zone, text, integer, integer,
    extensions.vector
) from public, anon;
grant execute on function memory.search_memories(
    text, uuid, text, text, uuid, uuid, timestamp with time zone, timestamp with time zone, text, integer, integer,
    extensions.vector
) to authenticated, service_role;

drop function memory.prompt_context(uuid, text, integer, integer, integer);
drop function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean);
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
from public, anon;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;

create function memory.prompt_context(
    p_conversation_id uuid,
    p_query text default null,
    p_max_turns integer default 10,
    p_memory_limit integer default null,
    p_token_budget integer default null,
    p_query_embedding extensions.vector default null
)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_conversation memory.conversations;
    v_memories jsonb := '[]';
    v_profiled boolean := false;
    v_history jsonb;
    v_position integer := memory_private.reference_position(p_query);
begin
    select c.* into v_conversation from memory.conversations as c where c.id = p_conversation_id;
    v_profiled := found and v_conversation.remember and exists (
        select 1 from memory.profiles as p
        where p.id = v_conversation.profile_id and p.user_id = v_conversation.user_id and p.is_primary
    );
    if v_profiled then
        select coalesce(jsonb_agg(to_jsonb(s)), '[]') into v_memories
        from memory.select_memories(
            v_conversation.user_id, v_conversation.profile_id, p_query, p_memory_limit, p_token_budget,
            p_query_embedding => p_query_embedding
        ) as s;
    end if;
    v_history := coalesce(
        (select jsonb_agg(to_jsonb(h) order by h.turn_number)
        from memory.turn_history(p_conversation_id, p_max_turns) as h),
        '[]'
    );
    return jsonb_build_object(
        'conversation_id', p_conversation_id,
        'history', v_history,
        -- The referenced turn comes from the window just built (resolve_reference's rule).
        'referenced_turn', v_history -> (case when v_position > 0 then v_position - 1 else v_position end),
        'memories', v_memories,
        'conversation_summary', (
            select to_jsonb(s) from memory.conversation_summaries as s
            where s.conversation_id = p_conversation_id
            order by s.to_turn desc limit 1
        ),
        'weekly_summary', case when v_profiled then (
            select to_jsonb(w) from memory.weekly_summaries as w
            where w.profile_id = v_conversation.profile_id
            order by w.week_start_date desc limit 1
        ) end,
        'monthly_summary', case when v_profiled then (
            select to_jsonb(m) from memory.monthly_summaries as m
            where m.profile_id = v_conversation.profile_id
            order by m.year desc, m.month desc limit 1
        ) end
    );
end
$$;
revoke all on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
from public, anon;
grant execute on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
to authenticated, service_role;
