-- Why: seed 004's reference uplift compares how helpful answers are with memories and without (the
-- chat's A/B arms): that needs the person who got an answer to say so. The rating is a column of the
-- answer (messages.helpful), so it goes with the answer wherever it goes (sweep, deletion, erasure),
-- written only here: the one who asked the question (the owner, or the participant who wrote it in
-- together mode) rates the answer, true or false; null takes the rating back. Another person's
-- answer, a question or a missing message are not found (P0002).
create function memory.rate_answer(p_message_id bigint, p_helpful boolean, p_user_id uuid default null)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.rate_answer(p_message_id, p_helpful, p_user_id);
end
$$;

revoke all on function memory.rate_answer(bigint, boolean, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.rate_answer(bigint, boolean, uuid) to authenticated, service_role;

-- Why: memory.rate_answer's body, run as the owner: callers have no update right on the column. A
-- signed-in caller rates as themself; the service role names the asker (p_user_id) or rates any answer.
create function memory_private.rate_answer(p_message_id bigint, p_helpful boolean, p_user_id uuid)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_asker uuid := coalesce((select auth.uid()), p_user_id);
begin
    update memory.messages as a
    set helpful = p_helpful
    where a.id = p_message_id and a.role = 'assistant'
        and exists (
            select 1 from memory.messages as q
            where q.conversation_id = a.conversation_id and q.turn_number = a.turn_number and q.role = 'user'
                and (v_asker is null or coalesce(q.author_id, q.user_id) = v_asker)
        );
    if not found then
        raise exception using errcode = 'P0002', message = 'no answer with that id to a question of this user';
    end if;
    return p_helpful;
end
$$;

revoke all on function memory_private.rate_answer(bigint, boolean, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.rate_answer(bigint, boolean, uuid) to authenticated, service_role;
