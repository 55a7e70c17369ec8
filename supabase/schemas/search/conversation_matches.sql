-- Why: the newest messages of one conversation that match a tsquery, at most p_limit, read by
-- walking the conversation newest first: lexical search within a conversation takes its candidates
-- here when the conversation is smaller than the user's matches of the query's rarest terms, which
-- the term index would read from every conversation of the user (a user of 100,000 messages: 13,494
-- matches read to keep 3,309 of one conversation). The walk stops at the limit and never reads
-- past the conversation; the function's settings leave it as the plan whatever a generic plan
-- estimates (the term index is read only through a bitmap), and the owner is a filter, never an
-- index condition (on a test database's statistics a generic plan read all the user's messages
-- through the user index, then sorted them). Runs with its caller's rights.
create function memory_private.conversation_matches(
    p_user_id uuid, p_conversation_id uuid, p_query tsquery, p_limit integer
)
returns table (id bigint, search tsvector)
language plpgsql
stable
rows 50
set search_path = ''
set enable_seqscan = off
set enable_bitmapscan = off
set plan_cache_mode = force_generic_plan
as $$
begin
    return query
    select m.id, m.search from memory.messages as m
    where m.conversation_id = p_conversation_id and m.user_id is not distinct from p_user_id
        and m.search @@ p_query
        and (m.expires_at is null or m.expires_at > now())
    order by m.turn_number desc, m.role
    limit p_limit;
end
$$;

revoke all on function memory_private.conversation_matches(uuid, uuid, tsquery, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.conversation_matches(uuid, uuid, tsquery, integer)
to authenticated, service_role;
