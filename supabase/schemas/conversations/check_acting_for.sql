-- Why: the service role may name the user it acts for when it writes a message or a turn; a
-- conversation of anyone else is then not found (P0002), as under RLS. Callers check only when a
-- user is named, so a write that names none pays no call.
create function memory_private.check_acting_for(p_conversation_id uuid, p_user_id uuid)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    if not exists (
        select 1 from memory.conversations as c where c.id = p_conversation_id and c.user_id = p_user_id
    ) then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s of user %s', p_conversation_id, p_user_id);
    end if;
end
$$;

revoke all on function memory_private.check_acting_for(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_acting_for(uuid, uuid) to authenticated, service_role;
