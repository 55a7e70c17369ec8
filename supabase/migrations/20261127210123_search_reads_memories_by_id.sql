-- Search reads the memories its words find by primary key alone: with the other conditions inside
-- the probe, statistics taken when few memories had a source message read them through the source
-- message index instead.

set check_function_bodies = off;

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
    -- The memories the words find lead to the turns they were drawn from, one primary-key probe
    -- each: the lateral names the id alone and its limit keeps the other conditions outside it
    -- (joined as a set, a small memories table was scanned whole for every search; with the
    -- conditions inside, statistics taken on a few memories read them by source message).
    by_memory as (
        select mm.source_message_id as id, max(l.score) as score
        from memory_private.lexical_memories(v_user, p_query, v_depth) as l
        cross join lateral (
            select x.source_message_id, x.source_conversation_id from memory.memories as x
            where x.id = l.memory_id
            limit 1
        ) as mm
        where mm.source_message_id is not null
            and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        group by mm.source_message_id
    ),
    lexical as (
        select coalesce(t.id, v.id) as id, coalesce(t.score, 0) + coalesce(v.score, 0) as score
        from by_text as t
        full join by_memory as v on v.id = t.id
    ),
    -- Without an embedding the vector side is not called.
    semantic as (
        select n.message_id as id, n.distance
        from memory_private.vector_messages(v_user, p_query_embedding, p_conversation_id, v_depth) as n
        where p_query_embedding is not null
    ),
    -- Either side's best scores 1; a turn one side did not find adds nothing from it.
    scaled as (
        select l.id, coalesce(l.score / nullif(max(l.score) over (), 0), 1) as score
        from lexical as l
        union all
        select s.id, memory_private.nearness(s.distance, min(s.distance) over (), max(s.distance) over ())
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


revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
