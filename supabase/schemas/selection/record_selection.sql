-- Why: seed 004 asks to track which memories were used: last referenced, reference count, and the
-- ids on the assistant message they served. A use is counted once per answer: ids already on the
-- message are not counted again. Signed-in callers can only mark their own memories.
create function memory_private.record_selection(p_memory_ids uuid[], p_message_id bigint)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_known uuid[];
begin
    if p_message_id is null then
        perform memory_private.reinforce(p_memory_ids);
        return;
    end if;
    select msg.used_memory_ids into v_known
    from memory.messages as msg
    where msg.id = p_message_id and msg.role = 'assistant'
        and msg.user_id = coalesce((select auth.uid()), msg.user_id)
    for update;
    if not found then
        return;
    end if;
    perform memory_private.reinforce(array(select unnest(p_memory_ids) except select unnest(v_known)));
    update memory.messages as msg
    set used_memory_ids = array(
        select u.id from unnest(v_known || p_memory_ids) with ordinality as u (id, n) group by u.id order by min(u.n)
    )
    where msg.id = p_message_id;
end
$$;

revoke all on function memory_private.record_selection(uuid[], bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.record_selection(uuid[], bigint) to authenticated, service_role;
