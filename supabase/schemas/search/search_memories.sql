-- Why: seed 004's Settings search and seed 002's GET /api/memories filters in one RPC. Keywords
-- rank by BM25, fused with the vector ranking when an embedding is given, as search_messages fuses
-- them (BM25 over the best, similarity scaled over the vector side's list, summed); a typo still
-- finds its memory through trigram word similarity. Returns plain memory rows; an unknown status or
-- a query over 1,000 characters is refused (22023).
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
        select l.memory_id,
            coalesce(l.score / nullif(max(l.score) over (), 0), 1) as score
        from memory_private.lexical_memories(v_user, p_query, 1000) as l
    ),
    semantic as (
        select n.memory_id, 1 - n.distance as similarity,
            memory_private.nearness(n.distance, min(n.distance) over (), max(n.distance) over ()) as score
        from memory_private.vector_memories(v_user, v_embedding, 100) as n
    ),
    -- Fused once: under a nested loop over the user's memories (the generic plan's choice) the ranks
    -- were computed again for every memory, about a tenth of a millisecond each.
    fused as materialized (
        -- A search filters: a memory that only the vector side finds must be similar enough.
        select coalesce(l.memory_id, s.memory_id) as memory_id,
            coalesce(s.similarity >= (memory_private.setting('memory_search_min_similarity'))::double precision, false)
            as near,
            coalesce(l.score, 0) + coalesce(s.score, 0) as score
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
    text, uuid, text, text, uuid, uuid, timestamp with time zone, timestamp with time zone, text,
    integer, integer, extensions.vector
) from public, anon, authenticated, service_role;
grant execute on function memory.search_memories(
    text, uuid, text, text, uuid, uuid, timestamp with time zone, timestamp with time zone, text,
    integer, integer, extensions.vector
) to authenticated, service_role;
