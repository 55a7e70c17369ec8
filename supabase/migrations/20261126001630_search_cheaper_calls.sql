-- any_term is plpgsql (as a sql function with a SET clause it was planned on every call), and
-- search_messages calls neither vector side without a query embedding.
set check_function_bodies = off;

create or replace function memory_private.any_term(p_terms text[])
returns tsquery
language plpgsql
immutable
set search_path to ''
as $function$
begin
    return nullif(
        array_to_string(array(select quote_literal(t.term) from unnest(p_terms) as t (term)), ' | '), ''
    )::tsquery;
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
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    -- Each ranking goes deeper than the page, so fusion can promote what one side ranks lower.
    v_depth := greatest(p_limit + p_offset, 50);
    if not memory_private.reads_user_messages(v_user) then
        return;
    end if;
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
            -- Without an embedding neither vector side is called.
            where p_query_embedding is not null
            union all
            select mm.source_message_id, n.distance
            from memory_private.vector_memories(v_user, p_query_embedding, v_depth) as n
            join memory.memories as mm on mm.id = n.memory_id
            where p_query_embedding is not null and mm.source_message_id is not null
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
    select array_agg(f.id order by f.score desc, f.id) into v_ids from fused as f;
    -- Planned for the ids at hand, so the page is always read by id. An admin reads only the
    -- messages of the tenants they administer, as under the messages policy.
    return query execute
        'select m.* from unnest($1) with ordinality as f (id, position)
        join memory.messages as m on m.id = f.id
        where m.user_id = $2 and (m.expires_at is null or m.expires_at > now())
            and ($5 or m.tenant_id = any((select memory_private.administered_tenants())::uuid[]))
        order by f.position
        limit $3 offset $4'
    using v_ids, v_user, p_limit, p_offset, coalesce(auth.uid() = v_user, true);
end
$function$;


revoke all on function memory_private.any_term(text[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.any_term(text[]) to authenticated, service_role;
revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
