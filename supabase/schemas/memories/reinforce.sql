-- Why: a duplicate or a use strengthens a memory: one more reference, the higher confidence.
-- Counters are not the caller's to set, so this runs as the owner and lets a signed-in caller
-- touch only their own memories (and anyone only p_user_id's, when given). Its generic plan (the
-- memories by id): plpgsql's own choice planned the update again for every use, about 190 us.
create function memory_private.reinforce(
    p_memory_ids uuid[], p_confidence numeric default null, p_user_id uuid default null
)
returns void
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
    update memory.memories as m
    -- Saturated: a counter at the integer's top must not make every later use fail.
    set reference_count = least(m.reference_count, 2147483646) + 1,
        last_referenced_at = now(),
        confidence = greatest(m.confidence, coalesce(p_confidence, m.confidence))
    where m.id = any(p_memory_ids) and m.user_id = coalesce((select auth.uid()), m.user_id)
        and (p_user_id is null or m.user_id = p_user_id);
end
$$;

revoke all on function memory_private.reinforce(uuid[], numeric, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.reinforce(uuid[], numeric, uuid) to authenticated, service_role;
