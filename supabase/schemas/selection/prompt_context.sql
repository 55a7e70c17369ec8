-- Why: the app builds a prompt in one round trip: the window of turns, the turn the user points at,
-- the latest conversation summary and, only when the conversation's profile is its owner's primary
-- one and "remember" is on (seed 004), the selected memories and newest weekly and monthly
-- summaries. In together mode a participant's prompt holds their own memories and summaries, of
-- the profile they chose for the conversation (the gate's rule), never the owner's. Read-only:
-- memories count as used when the answer is stored with their ids. json, not jsonb: the document
-- is built once and sent, and jsonb's building (a sorted object per row) and its output took about
-- a fifth of the call.
create function memory.prompt_context(
    p_conversation_id uuid,
    p_query text default null,
    p_max_turns integer default 10,
    p_memory_limit integer default null,
    p_token_budget integer default null,
    p_query_embedding extensions.vector default null
)
returns json
language plpgsql
stable
set search_path = ''
as $$
declare
    v_conversation memory.conversations;
    v_memories json := '[]';
    v_profiled boolean := false;
    v_history json;
    v_position integer := memory_private.reference_position(p_query);
    v_caller uuid := (select auth.uid());
    -- Whose memory the prompt holds: the owner's, or a participant's own.
    v_user uuid;
    v_profile uuid;
    v_chars integer;
begin
    select c.* into v_conversation from memory.conversations as c where c.id = p_conversation_id;
    if found then
        v_user := v_conversation.user_id;
        v_profile := v_conversation.profile_id;
        -- Another reader who is no participant (a tenant admin) gets the owner's, as the policies let them.
        if v_caller <> v_conversation.user_id and exists (
            select 1 from memory.participants as p where p.conversation_id = p_conversation_id and p.user_id = v_caller
        ) then
            v_user := v_caller;
            v_profile := memory_private.chosen_profile(p_conversation_id);
        end if;
        v_profiled := v_conversation.remember and exists (
            select 1 from memory.profiles as p where p.id = v_profile and p.user_id = v_user and p.is_primary
        );
    end if;
    if v_profiled then
        select coalesce(json_agg(s), '[]') into v_memories
        from memory.select_memories(
            v_user, v_profile, p_query, p_memory_limit, p_token_budget, p_query_embedding => p_query_embedding
        ) as s;
    end if;
    -- A long text of the window reaches the prompt as its beginning (memory_private.prompt_text).
    v_chars := memory_private.number_setting('llm_text_chars', 1);
    v_history := coalesce(
        (select json_agg(h order by h.turn_number)
        from (
            select t.conversation_id, t.user_id, t.tenant_id, t.turn_number, t.user_message_id,
                t.assistant_message_id, memory_private.prompt_text(t.user_content, v_chars) as user_content,
                memory_private.prompt_text(t.assistant_content, v_chars) as assistant_content, t.metadata, t.created_at
            from memory_private.turn_history(p_conversation_id, p_max_turns) as t
        ) as h),
        '[]'
    );
    return json_build_object(
        'conversation_id', p_conversation_id,
        'history', v_history,
        -- The referenced turn comes from the window just built (resolve_reference's rule).
        'referenced_turn', v_history -> (case when v_position > 0 then v_position - 1 else v_position end),
        'memories', v_memories,
        'conversation_summary', (
            select to_json(s) from memory.conversation_summaries as s
            where s.conversation_id = p_conversation_id
            order by s.to_turn desc limit 1
        ),
        'weekly_summary', case when v_profiled then (
            select to_json(w) from memory.weekly_summaries as w
            where w.profile_id = v_profile
            order by w.week_start_date desc limit 1
        ) end,
        'monthly_summary', case when v_profiled then (
            select to_json(m) from memory.monthly_summaries as m
            where m.profile_id = v_profile
            order by m.year desc, m.month desc limit 1
        ) end
    );
end
$$;

revoke all on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
to authenticated, service_role;
