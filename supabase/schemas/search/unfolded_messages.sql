-- Why: the user's messages the search-term fold has not reached yet (ids after p_after) with their
-- lexemes, at most 20,000 (should the fold fall that far behind, the newest, the ones a search
-- wants), for lexical search to count them and find among them what has no postings yet.
-- The user is a range of (user_id, id), which no other index serves: with `user_id =` and `id >`,
-- a generic plan on a database of few users read the primary key through every user's turns since
-- the fold, and the range's poor estimate made a sequential scan look cheaper; the row comparisons
-- and the function's settings leave the range scan as the plan. The range is read forward, from the
-- fold's watermark: read backward from the user's newest message, a scan does not stop where the
-- lower row comparison fails (it fails on its second column, which btree does not take for the end
-- of the scan), and walked the whole of the user's history to find nothing. Only a backlog over the
-- cap is read backward, where the limit ends the walk. Runs with its caller's rights, so RLS
-- decides for a direct caller of lexical search.
create function memory_private.unfolded_messages(p_user_id uuid, p_after bigint)
returns table (id bigint, search tsvector)
language plpgsql
stable
rows 10
set search_path = ''
set enable_seqscan = off
set enable_bitmapscan = off
set plan_cache_mode = force_generic_plan
as $$
declare
    v_behind integer;
begin
    select count(*) into v_behind
    from (
        select from memory.messages as m
        where (m.user_id, m.id) > (p_user_id, p_after)
            and (m.user_id, m.id) <= (p_user_id, 9223372036854775807::bigint)
        limit 20001
    ) as x;
    if v_behind <= 20000 then
        return query
        select m.id, m.search from memory.messages as m
        where (m.user_id, m.id) > (p_user_id, p_after)
            and (m.user_id, m.id) <= (p_user_id, 9223372036854775807::bigint)
        order by m.user_id, m.id;
        return;
    end if;
    return query
    select m.id, m.search from memory.messages as m
    where (m.user_id, m.id) > (p_user_id, p_after)
        and (m.user_id, m.id) <= (p_user_id, 9223372036854775807::bigint)
    order by m.user_id desc, m.id desc
    limit 20000;
end
$$;

revoke all on function memory_private.unfolded_messages(uuid, bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.unfolded_messages(uuid, bigint) to authenticated, service_role;
