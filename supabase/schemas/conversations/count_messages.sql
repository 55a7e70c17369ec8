-- Why: seed 003 counts a history; expired messages do not count.
create function memory.count_messages(p_conversation_id uuid)
returns bigint
language plpgsql
stable
set search_path = ''
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
