-- Why: seed 004 asks to track which memories were used: last referenced, reference count, and the
-- ids on the assistant message they served. A use is counted once per answer: ids already on the
-- message are not counted again. Signed-in callers can only mark their own memories; the service
-- role acting for a user (p_user_id) only that user's answers, and only the answer's owner's
-- memories are counted. Whether the answer was found (false: missing, or not the caller's).
create function memory_private.record_selection(
    p_memory_ids uuid[], p_message_id bigint, p_user_id uuid default null
)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_known uuid[];
    v_owner uuid;
begin
    if p_message_id is null then
        perform memory_private.reinforce(p_memory_ids, null, p_user_id);
        return true;
    end if;
    select msg.used_memory_ids, msg.user_id into v_known, v_owner
    from memory.messages as msg
    where msg.id = p_message_id and msg.role = 'assistant'
        and msg.user_id = coalesce((select auth.uid()), p_user_id, msg.user_id)
    for update;
    if not found then
        return false;
    end if;
    perform memory_private.reinforce(array(select unnest(p_memory_ids) except select unnest(v_known)), null, v_owner);
    update memory.messages as msg
    set used_memory_ids = array(
        select u.id from unnest(v_known || p_memory_ids) with ordinality as u (id, n) group by u.id order by min(u.n)
    )
    where msg.id = p_message_id;
    return true;
end
$$;

revoke all on function memory_private.record_selection(uuid[], bigint, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory_private.record_selection(uuid[], bigint, uuid) to authenticated, service_role;
