-- Why: seeds 000 and 001 read whole turns; the newest N, oldest first, bounded by the index.
create function memory.turn_history(p_conversation_id uuid, p_max_turns integer default 10)
returns setof memory.turns
language plpgsql
stable
set search_path = ''
as $$
begin
    return query
    select t.* from memory_private.turn_history(p_conversation_id, p_max_turns) as t;
end
$$;

revoke all on function memory.turn_history(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory.turn_history(uuid, integer) to authenticated, service_role;

-- Why: memory.turn_history's body (the window every prompt reads), run as the owner after one check
-- that the caller may read the conversation (memory_private.reads_conversation), as
-- memory_private.history is: under the per-row OR policy of messages, statistics that had not
-- seen the user's latest messages led the planner to read all of the user's messages through the
-- user index for a window of 20 (tests/test_function_plans.py). A caller who may not read the
-- conversation gets no turns, as under RLS. Its generic plan: plpgsql's own choice re-planned the
-- window on every call (the generic plan's estimate is the larger, for the same range read), about
-- 100 us of every prompt read.
create function memory_private.turn_history(p_conversation_id uuid, p_max_turns integer)
returns setof memory.turns
language plpgsql
stable
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    v_last integer;
begin
    if p_max_turns is null or p_max_turns < 1 or p_max_turns > 500 then
        raise exception using errcode = '22023', message = 'max turns must be 1..500';
    end if;
    if not memory_private.reads_conversation(p_conversation_id) then
        return;
    end if;
    select c.last_turn into v_last from memory.conversations as c where c.id = p_conversation_id;
    return query
    select t.*
    from memory.turns as t
    where t.conversation_id = p_conversation_id and t.turn_number > coalesce(v_last, 0) - p_max_turns
    order by t.turn_number;
end
$$;

revoke all on function memory_private.turn_history(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.turn_history(uuid, integer) to authenticated, service_role;
