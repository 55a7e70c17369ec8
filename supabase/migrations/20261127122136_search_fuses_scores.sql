-- Search fuses its lexical and vector rankings by their scores, not their ranks (reciprocal rank
-- fusion): BM25 over the best score plus the similarity scaled over the vector side's list, equal
-- weights, so how far a result leads on one side now counts.

set check_function_bodies = off;

create or replace function memory.search_memories(
    p_query text default null::text,
    p_user_id uuid default null::uuid,
    p_type text default null::text,
    p_category text default null::text,
    p_profile_id uuid default null::uuid,
    p_conversation_id uuid default null::uuid,
    p_created_from timestamp with time zone default null::timestamp with time zone,
    p_created_to timestamp with time zone default null::timestamp with time zone,
    p_status text default 'active'::text,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.memories
language plpgsql
stable
set search_path to ''
as $function$
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
            coalesce((max(n.distance) over () - n.distance) / nullif(max(n.distance) over () - min(n.distance) over (), 0), 1)
            as score
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
$function$;

create or replace function memory_private.search_messages(
    p_query text,
    p_user_id uuid,
    p_conversation_id uuid,
    p_limit integer,
    p_offset integer,
    p_query_embedding extensions.vector
)
returns setof memory.messages
language plpgsql
stable security definer
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_depth integer;
    v_ids bigint[];
    -- Null for the user themselves and trusted callers; an admin's tenants otherwise.
    v_tenants uuid[];
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    -- Each ranking goes deeper than the page, so fusion can promote what one side ranks lower.
    v_depth := greatest(p_limit + p_offset, 50);
    if not memory_private.reads_user_messages(v_user) then
        return;
    end if;
    if not coalesce(auth.uid() = v_user, true) then
        v_tenants := memory_private.administered_tenants();
    end if;
    with by_text as (
        select l.message_id as id, l.score
        from memory_private.lexical_messages(v_user, p_query, p_conversation_id, v_depth) as l
    ),
    -- The memories either side finds lead to the turns they were drawn from, one probe each (the
    -- lateral's limit keeps it so: joined as a set, a small memories table was scanned whole for
    -- every search).
    memory_hits as (
        select h.lexical, mm.source_message_id as id, h.score, h.distance
        from (
            select true as lexical, l.memory_id, l.score, null::double precision as distance
            from memory_private.lexical_memories(v_user, p_query, v_depth) as l
            union all
            select false, n.memory_id, null, n.distance
            from memory_private.vector_memories(v_user, p_query_embedding, v_depth) as n
            -- Without an embedding neither vector side is called.
            where p_query_embedding is not null
        ) as h
        cross join lateral (
            select x.source_message_id from memory.memories as x
            where x.id = h.memory_id and x.source_message_id is not null
                and (p_conversation_id is null or x.source_conversation_id = p_conversation_id)
            limit 1
        ) as mm
    ),
    by_memory as (
        select h.id, max(h.score) as score from memory_hits as h where h.lexical group by h.id
    ),
    lexical as (
        select coalesce(t.id, v.id) as id, coalesce(t.score, 0) + coalesce(v.score, 0) as score
        from by_text as t
        full join by_memory as v on v.id = t.id
    ),
    -- A message is as near as it or the nearest memory drawn from it.
    semantic as (
        select x.id, 1 - min(x.distance) as score
        from (
            select n.message_id as id, n.distance
            from memory_private.vector_messages(v_user, p_query_embedding, p_conversation_id, v_depth) as n
            where p_query_embedding is not null
            union all
            select h.id, h.distance from memory_hits as h where not h.lexical
        ) as x
        group by x.id
    ),
    -- Either side's best scores 1; a turn one side did not find adds nothing from it.
    scaled as (
        select l.id, coalesce(l.score / nullif(max(l.score) over (), 0), 1) as score
        from lexical as l
        union all
        select s.id, coalesce((s.score - min(s.score) over ()) / nullif(max(s.score) over () - min(s.score) over (), 0), 1)
        from semantic as s
    ),
    fused as (
        select c.id, sum(c.score) as score from scaled as c group by c.id
    )
    select array_agg(f.id order by f.score desc, f.id) into v_ids from fused as f;
    -- The page is read by id: one primary-key probe per fused id, in rank order (the lateral's
    -- limit keeps it a probe per id, where a join could scan the user's messages). An admin reads
    -- only the messages of the tenants they administer, as under the messages policy.
    return query
    select m.*
    from unnest(v_ids) with ordinality as f (id, position)
    cross join lateral (
        select x.* from memory.messages as x
        where x.id = f.id and x.user_id = v_user and (x.expires_at is null or x.expires_at > now())
            and (v_tenants is null or x.tenant_id = any(v_tenants))
        limit 1
    ) as m
    order by f.position
    limit p_limit offset p_offset;
end
$function$;


revoke all on function memory.search_memories(
    text,
    uuid,
    text,
    text,
    uuid,
    uuid,
    timestamp with time zone,
    timestamp with time zone,
    text,
    integer,
    integer,
    extensions.vector
)
from public, anon, authenticated, service_role;
grant execute on function memory.search_memories(
    text,
    uuid,
    text,
    text,
    uuid,
    uuid,
    timestamp with time zone,
    timestamp with time zone,
    text,
    integer,
    integer,
    extensions.vector
)
to authenticated, service_role;
revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
