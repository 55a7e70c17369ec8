-- Why: seed 002's "search conversations": the user's conversations whose title holds the query,
-- then those whose turns search_messages ranks (BM25 and, given the query's embedding, meaning),
-- each by its best turn. Runs as the caller: row-level security decides which conversations it
-- returns, and search_messages' own access check which turns count.
create function memory.search_conversations(
    p_query text,
    p_user_id uuid default null,
    p_archived boolean default false,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null
)
returns setof memory.conversations
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_query text := btrim(p_query);
begin
    if v_query is null or v_query = '' or length(v_query) > 1000 then
        raise exception using errcode = '22023', message = 'query must be 1..1000 characters';
    end if;
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    return query
    with turns as (
        select t.conversation_id, min(t.ordinality) as best
        from memory.search_messages(v_query, v_user, null, 200, 0, p_query_embedding) with ordinality as t
        group by t.conversation_id
    )
    select c.*
    from memory.conversations as c
    left join turns as t on t.conversation_id = c.id
    cross join lateral (select coalesce(strpos(lower(c.title), lower(v_query)), 0) > 0 as hit) as title
    where c.user_id = v_user
        and (p_archived is null or c.archived = p_archived)
        and (c.expires_at is null or c.expires_at > now())
        and (t.best is not null or title.hit)
    order by title.hit desc, t.best nulls last, c.updated_at desc, c.id
    limit p_limit offset p_offset;
end
$$;

revoke all on function memory.search_conversations(text, uuid, boolean, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.search_conversations(text, uuid, boolean, integer, integer, extensions.vector)
to authenticated, service_role;
