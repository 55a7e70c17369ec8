-- Why: seed 003 counts a history; expired messages do not count. Its generic plan: plpgsql's own
-- choice planned the count again on every call, for longer than it runs.
create function memory.count_messages(p_conversation_id uuid)
returns bigint
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
    return (
        select count(*)
        from memory.messages as m
        where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
    );
end
$$;

revoke all on function memory.count_messages(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.count_messages(uuid) to authenticated, service_role;
