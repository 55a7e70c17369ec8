-- Why: the right to be forgotten in one call: the user row goes and with it, by cascade, their
-- conversations, messages, memories, history, summaries and state; the turns they wrote in other
-- people's conversations go too, question and answer. Nothing else of anyone else's is touched.
create function memory.erase_user(p_user_id uuid default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_authored integer;
    v_memories integer;
    v_conversations integer;
begin
    select count(*) into v_memories from memory.memories as m where m.user_id = v_user;
    select count(*) into v_conversations from memory.conversations as c where c.user_id = v_user;
    v_authored := memory_private.delete_authored_turns(v_user);
    delete from memory.users as u where u.id = v_user;
    if not found then
        raise exception using errcode = 'P0002', message = 'user not found';
    end if;
    return jsonb_build_object(
        'user_id', v_user, 'memories', v_memories, 'conversations', v_conversations,
        'messages_in_other_conversations', v_authored
    );
end
$$;

revoke all on function memory.erase_user(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.erase_user(uuid) to service_role;
