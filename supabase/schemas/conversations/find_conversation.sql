-- Why: the conversation current_conversation would pick, or none; the rule lives here once and
-- current_conversation calls it.
create function memory.find_conversation(p_user_id uuid default null, p_match jsonb default '{}')
returns setof memory.conversations
language plpgsql
stable
set search_path = ''
as $$
begin
    return query
    select c.*
    from memory.conversations as c
    where c.user_id = memory_private.acting_user(p_user_id)
        and not c.archived
        and (c.expires_at is null or c.expires_at > now())
        and c.metadata @> coalesce(p_match, '{}')
    order by c.updated_at desc
    limit 1;
end
$$;

revoke all on function memory.find_conversation(uuid, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.find_conversation(uuid, jsonb) to authenticated, service_role;
