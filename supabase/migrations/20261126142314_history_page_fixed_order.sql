-- The history page runs one statement per order: sort keys chosen by a parameter
-- (case when p_newest_first ...) cost about 45 us a call against fixed keys.
set check_function_bodies = off;

create or replace function memory_private.history(
    p_conversation_id uuid, p_limit integer, p_offset integer, p_newest_first boolean
)
returns setof memory.messages
language plpgsql
stable security definer
set search_path to ''
set enable_bitmapscan to 'off'
as $function$
begin
    if p_limit is null or p_limit < 1 or p_limit > 1000 or p_offset is null or p_offset < 0 then
        raise exception using errcode = '22023', message = 'limit must be 1..1000 and offset >= 0';
    end if;
    if not memory_private.reads_conversation(p_conversation_id) then
        return;
    end if;
    -- The page is always cut newest-first; oldest-first sorts just that page. One statement per
    -- order: sort keys chosen by a parameter (case when p_newest_first ...) cost about 45 us a call.
    if p_newest_first then
        return query
        select m.*
        from memory.messages as m
        where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
        order by m.turn_number desc, m.role asc
        limit p_limit offset p_offset;
    else
        return query
        select page.*
        from (
            select m.*
            from memory.messages as m
            where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
            order by m.turn_number desc, m.role asc
            limit p_limit offset p_offset
        ) as page
        order by page.turn_number asc, page.role desc;
    end if;
end
$function$;


revoke all on function memory_private.history(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.history(uuid, integer, integer, boolean) to authenticated, service_role;
