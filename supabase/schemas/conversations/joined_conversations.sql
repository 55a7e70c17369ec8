-- Why: together-mode policies need "conversations I take part in" without exposing the
-- participant lists of other conversations and without policies that recurse into each other.
create function memory_private.joined_conversations()
returns uuid[]
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return (
        select coalesce(array_agg(p.conversation_id), '{}')
        from memory.participants as p
        where p.user_id = (select auth.uid())
    );
end
$$;

revoke all on function memory_private.joined_conversations() from public, anon, authenticated, service_role;
grant execute on function memory_private.joined_conversations() to authenticated, service_role;
