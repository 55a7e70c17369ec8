-- The walk of one conversation's matches takes its owner as a filter, never an index condition: on
-- a test database's statistics a generic plan read all the user's messages through the user index,
-- then sorted them, instead of walking the conversation.

set check_function_bodies = off;

create or replace function memory_private.conversation_matches(
    p_user_id uuid, p_conversation_id uuid, p_query tsquery, p_limit integer
)
returns table (id bigint, search tsvector)
language plpgsql
stable rows 50
set search_path to ''
set enable_seqscan to 'off'
set enable_bitmapscan to 'off'
set plan_cache_mode to 'force_generic_plan'
as $function$
begin
    return query
    select m.id, m.search from memory.messages as m
    where m.conversation_id = p_conversation_id and m.user_id is not distinct from p_user_id
        and m.search @@ p_query
        and (m.expires_at is null or m.expires_at > now())
    order by m.turn_number desc, m.role
    limit p_limit;
end
$function$;


revoke all on function memory_private.conversation_matches(uuid, uuid, tsquery, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.conversation_matches(uuid, uuid, tsquery, integer) to authenticated,
service_role;
