-- The prompt's window and the history page read the same few rows however the statistics stand:
-- the window's read (memory_private.turn_history, which prompt_context and resolve_reference call
-- directly) runs as the owner after one access check (under the per-row OR policy, statistics that
-- had not seen the user's latest messages read all of them for a window), and the history page is
-- never read through a bitmap (a conversation that grew since the statistics were taken was read
-- whole and sorted for its page).
set check_function_bodies = off;

create or replace function memory_private.turn_history(p_conversation_id uuid, p_max_turns integer)
returns setof memory.turns
language plpgsql
stable security definer
set search_path to ''
as $function$
declare
    v_last integer;
begin
    if p_max_turns is null or p_max_turns < 1 or p_max_turns > 500 then
        raise exception using errcode = '22023', message = 'max turns must be 1..500';
    end if;
    if not memory_private.reads_conversation(p_conversation_id) then
        return;
    end if;
    select c.last_turn into v_last from memory.conversations as c where c.id = p_conversation_id;
    return query
    select t.*
    from memory.turns as t
    where t.conversation_id = p_conversation_id and t.turn_number > coalesce(v_last, 0) - p_max_turns
    order by t.turn_number;
end
$function$;

create or replace function memory.prompt_context(
    p_conversation_id uuid,
    p_query text default null::text,
    p_max_turns integer default 10,
    p_memory_limit integer default null::integer,
    p_token_budget integer default null::integer,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns jsonb
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_conversation memory.conversations;
    v_memories jsonb := '[]';
    v_profiled boolean := false;
    v_history jsonb;
    v_position integer := memory_private.reference_position(p_query);
begin
    select c.* into v_conversation from memory.conversations as c where c.id = p_conversation_id;
    v_profiled := found and v_conversation.remember and exists (
        select 1 from memory.profiles as p
        where p.id = v_conversation.profile_id and p.user_id = v_conversation.user_id and p.is_primary
    );
    if v_profiled then
        select coalesce(jsonb_agg(to_jsonb(s)), '[]') into v_memories
        from memory.select_memories(
            v_conversation.user_id, v_conversation.profile_id, p_query, p_memory_limit, p_token_budget,
            p_query_embedding => p_query_embedding
        ) as s;
    end if;
    v_history := coalesce(
        (select jsonb_agg(to_jsonb(h) order by h.turn_number)
        from memory_private.turn_history(p_conversation_id, p_max_turns) as h),
        '[]'
    );
    return jsonb_build_object(
        'conversation_id', p_conversation_id,
        'history', v_history,
        -- The referenced turn comes from the window just built (resolve_reference's rule).
        'referenced_turn', v_history -> (case when v_position > 0 then v_position - 1 else v_position end),
        'memories', v_memories,
        'conversation_summary', (
            select to_jsonb(s) from memory.conversation_summaries as s
            where s.conversation_id = p_conversation_id
            order by s.to_turn desc limit 1
        ),
        'weekly_summary', case when v_profiled then (
            select to_jsonb(w) from memory.weekly_summaries as w
            where w.profile_id = v_conversation.profile_id
            order by w.week_start_date desc limit 1
        ) end,
        'monthly_summary', case when v_profiled then (
            select to_jsonb(m) from memory.monthly_summaries as m
            where m.profile_id = v_conversation.profile_id
            order by m.year desc, m.month desc limit 1
        ) end
    );
end
$function$;

create or replace function memory.resolve_reference(p_conversation_id uuid, p_text text, p_max_turns integer default 10)
returns setof memory.turns
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_position integer := memory_private.reference_position(p_text);
begin
    if v_position is null then
        return;
    end if;
    return query
    select w.*
    from memory_private.turn_history(p_conversation_id, p_max_turns) as w
    order by
        case when v_position > 0 then w.turn_number end asc,
        case when v_position < 0 then w.turn_number end desc
    limit 1 offset abs(v_position) - 1;
end
$function$;

create or replace function memory.turn_history(p_conversation_id uuid, p_max_turns integer default 10)
returns setof memory.turns
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    select t.* from memory_private.turn_history(p_conversation_id, p_max_turns) as t;
end
$function$;


revoke all on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.prompt_context(uuid, text, integer, integer, integer, extensions.vector)
to authenticated, service_role;
revoke all on function memory.resolve_reference(uuid, text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.resolve_reference(uuid, text, integer) to authenticated, service_role;
revoke all on function memory.turn_history(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory.turn_history(uuid, integer) to authenticated, service_role;
revoke all on function memory_private.turn_history(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.turn_history(uuid, integer) to authenticated, service_role;

alter function memory_private.history(uuid, integer, integer, boolean) set enable_bitmapscan = off;
