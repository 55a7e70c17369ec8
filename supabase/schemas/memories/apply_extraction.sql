-- Why: the direct RPC (a service-role app extracting on its own): past extraction_rate_limit
-- applications per user per minute it refuses with 54000.
create function memory.apply_extraction(
    p_source_message_id bigint, p_memories jsonb, p_user_id uuid default null
)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path = ''
as $$
begin
    return query
    select r.memory_id, r.outcome
    from memory_private.extract_memories(p_source_message_id, p_memories, p_user_id, true) as r;
end
$$;

revoke all on function memory.apply_extraction(bigint, jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.apply_extraction(bigint, jsonb, uuid) to service_role;
