-- Why: seed 002's "always include in context": pinned memories come first in selection and are
-- never archived to make room. The RPC form of the one direct write users have on memories, for
-- callers who prefer an RPC or act for a user as the service role.
create function memory.pin_memory(
    p_memory_id uuid, p_pinned boolean default true, p_user_id uuid default null
)
returns memory.memories
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.pin_memory(p_memory_id, p_pinned, p_user_id);
end
$$;

revoke all on function memory.pin_memory(uuid, boolean, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.pin_memory(uuid, boolean, uuid) to authenticated, service_role;

-- Why: memory.pin_memory's body, run as the owner, for callers who prefer the
-- RPC (or act for a user as the service role) to the direct update of pinned.
create function memory_private.pin_memory(p_memory_id uuid, p_pinned boolean, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
begin
    update memory.memories as m set pinned = coalesce(p_pinned, true)
    where m.id = p_memory_id and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    returning m.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found';
    end if;
    return v_row;
end
$$;

revoke all on function memory_private.pin_memory(uuid, boolean, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.pin_memory(uuid, boolean, uuid) to authenticated, service_role;
