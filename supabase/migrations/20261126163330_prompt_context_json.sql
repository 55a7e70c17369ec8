-- prompt_context returns json: built once and sent, where jsonb's building and output took about a
-- fifth of the call. A changed return type needs the function dropped first.
drop function if exists memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector);

set check_function_bodies = off;

create function memory.prompt_context(
    p_conversation_id uuid,
    p_query text default null::text,
    p_max_turns integer default 10,
    p_memory_limit integer default null::integer,
    p_token_budget integer default null::integer,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns json
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_conversation memory.conversations;
    v_memories json := '[]';
    v_profiled boolean := false;
    v_history json;
    v_position integer := memory_private.reference_position(p_query);
begin
    select c.* into v_conversation from memory.conversations as c where c.id = p_conversation_id;
    v_profiled := found and v_conversation.remember and exists (
        select 1 from memory.profiles as p
        where p.id = v_conversation.profile_id and p.user_id = v_conversation.user_id and p.is_primary
    );
    if v_profiled then
        select coalesce(json_agg(s), '[]') into v_memories
        from memory.select_memories(
            v_conversation.user_id, v_conversation.profile_id, p_query, p_memory_limit, p_token_budget,
            p_query_embedding => p_query_embedding
        ) as s;
    end if;
    v_history := coalesce(
        (select json_agg(h order by h.turn_number)
        from memory_private.turn_history(p_conversation_id, p_max_turns) as h),
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
            where w.profile_id = v_conversation.profile_id
            order by w.week_start_date desc limit 1
        ) end,
        'monthly_summary', case when v_profiled then (
            select to_json(m) from memory.monthly_summaries as m
            where m.profile_id = v_conversation.profile_id
            order by m.year desc, m.month desc limit 1
        ) end
    );
end
$function$;


revoke all on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
to authenticated, service_role;
