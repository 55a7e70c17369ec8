-- Why: prompts want the newest messages oldest-first, screens want them newest-first and paged
-- (seed 003); both walk the (conversation, turn, role) index backwards and stop at the limit.
create function memory.history(
    p_conversation_id uuid,
    p_limit integer default 20,
    p_offset integer default 0,
    p_newest_first boolean default false
)
returns setof memory.messages
language plpgsql
stable
set search_path = ''
as $$
begin
    return query
    select h.* from memory_private.history(p_conversation_id, p_limit, p_offset, p_newest_first) as h;
end
$$;

revoke all on function memory.history(uuid, integer, integer, boolean) from public, anon, authenticated, service_role;
grant execute on function memory.history(uuid, integer, integer, boolean) to authenticated, service_role;

-- Why: memory.history's body, run as the owner after one check that the caller may read the
-- conversation (memory_private.reads_conversation): under the per-row OR policy of messages the
-- planner expected few rows to pass and sorted the whole conversation instead of walking the
-- index (tests/test_function_plans.py). A caller who may not read the conversation gets no rows,
-- as under RLS. Bitmap scans are off: a conversation that grew since the statistics were taken
-- looks small to the planner, which then read all of it through a bitmap and sorted it for the
-- page, where walking the index stops at the page whatever the conversation's length. The
-- statements keep their generic plans (the same walk): plpgsql's own choice re-planned the page on
-- every call, about a fifth of the read.
create function memory_private.history(
    p_conversation_id uuid, p_limit integer, p_offset integer, p_newest_first boolean
)
returns setof memory.messages
language plpgsql
stable
security definer
set search_path = ''
set enable_bitmapscan = off
set plan_cache_mode = force_generic_plan
as $$
begin
    if p_limit is null or p_limit < 1 or p_limit > 1000 or p_offset is null or p_offset < 0 then
        raise exception using errcode = '22023', message = 'limit must be 1..1000 and offset >= 0';
    end if;
    if not memory_private.reads_conversation(p_conversation_id) then
        return;
    end if;
    -- The page is always cut newest-first; oldest-first sorts just that page. One statement per
    -- order: sort keys chosen by a parameter (case when p_newest_first ...) cost about 45 us a call.
    if p_newest_first then
        return query
        select m.*
        from memory.messages as m
        where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
        order by m.turn_number desc, m.role asc
        limit p_limit offset p_offset;
    else
        return query
        select page.*
        from (
            select m.*
            from memory.messages as m
            where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
            order by m.turn_number desc, m.role asc
            limit p_limit offset p_offset
        ) as page
        order by page.turn_number asc, page.role desc;
    end if;
end
$$;

revoke all on function memory_private.history(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.history(uuid, integer, integer, boolean) to authenticated, service_role;
