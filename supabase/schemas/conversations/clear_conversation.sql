-- Why: seed 003's clear_conversation_history: the messages go, the conversation stays; turn
-- numbers keep counting up, so a turn number never names two different turns.
create function memory.clear_conversation(p_conversation_id uuid)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_deleted integer;
begin
    delete from memory.messages as m where m.conversation_id = p_conversation_id;
    get diagnostics v_deleted = row_count;
    return v_deleted;
end
$$;

revoke all on function memory.clear_conversation(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.clear_conversation(uuid) to authenticated, service_role;
