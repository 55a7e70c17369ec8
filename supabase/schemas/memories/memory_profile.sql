-- Why: the profile a memory belongs to is decided in one place: the one the gate checked for a
-- memory from a conversation, else the one asked for, else the user's primary profile.
create function memory_private.memory_profile(p_user_id uuid, p_message_id bigint, p_profile_id uuid)
returns uuid
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return (
        -- A signed-in caller learns nothing about anyone else's profiles.
        select case when (select auth.uid()) is null or p_user_id = (select auth.uid()) then coalesce(
            (select case when c.user_id = p_user_id then c.profile_id else p.profile_id end
             from memory.messages as m
             join memory.conversations as c on c.id = m.conversation_id
             left join memory.participants as p on p.conversation_id = c.id and p.user_id = p_user_id
             where m.id = p_message_id and (c.user_id = p_user_id or p.user_id is not null)),
            p_profile_id,
            (select p.id from memory.profiles as p where p.user_id = p_user_id and p.is_primary)
        ) end
    );
end
$$;

revoke all on function memory_private.memory_profile(uuid, bigint, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.memory_profile(uuid, bigint, uuid) to authenticated, service_role;
