-- History reads check access once: memory.history's body runs as the owner (memory_private.history)
-- after one check that the caller may read the conversation (memory_private.reads_conversation),
-- so its page is an index range scan instead of a sort of the whole conversation under the
-- per-row policy of messages.
set check_function_bodies = off;

create or replace function memory_private.history(
    p_conversation_id uuid, p_limit integer, p_offset integer, p_newest_first boolean
)
returns setof memory.messages
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    if p_limit is null or p_limit < 1 or p_limit > 1000 or p_offset is null or p_offset < 0 then
        raise exception using errcode = '22023', message = 'limit must be 1..1000 and offset >= 0';
    end if;
    if not memory_private.reads_conversation(p_conversation_id) then
        return;
    end if;
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
        from memory_private.history(p_conversation_id, p_limit, p_offset, true) as page
        order by page.turn_number asc, page.role desc;
    end if;
end
$function$;

create or replace function memory_private.reads_conversation(p_conversation_id uuid)
returns boolean
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_uid uuid := (select auth.uid());
begin
    if v_uid is null then
        return pg_has_role(coalesce(nullif(current_setting('role'), 'none'), session_user), 'service_role', 'usage');
    end if;
    return exists (
        select 1 from memory.conversations as c
        where c.id = p_conversation_id
            and (c.expires_at is null or c.expires_at > now())
            and (
                c.user_id = v_uid
                or c.id = any(memory_private.joined_conversations())
                or c.tenant_id = any(memory_private.administered_tenants())
            )
    );
end
$function$;

create or replace function memory.history(
    p_conversation_id uuid, p_limit integer default 20, p_offset integer default 0, p_newest_first boolean default false
)
returns setof memory.messages
language sql
stable
set search_path to ''
as $function$
    select h.* from memory_private.history(p_conversation_id, p_limit, p_offset, p_newest_first) as h
$function$;


revoke all on function memory.history(uuid, integer, integer, boolean) from public, anon, authenticated, service_role;
grant execute on function memory.history(uuid, integer, integer, boolean) to authenticated, service_role;
revoke all on function memory_private.history(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.history(uuid, integer, integer, boolean) to authenticated, service_role;
revoke all on function memory_private.reads_conversation(uuid) from public, anon, authenticated, service_role;
