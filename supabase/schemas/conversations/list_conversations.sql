-- Why: seed 002's GET /api/conversations: a user's conversations, most recently active first,
-- paged, with the archived and expiry filters stated once instead of in every client. Runs as the
-- caller: RLS decides, so a signed-in user lists their own and the service role names the user.
create function memory.list_conversations(
    p_user_id uuid default null,
    p_archived boolean default false,
    p_limit integer default 20,
    p_offset integer default 0
)
returns setof memory.conversations
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 100000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..100000';
    end if;
    return query
    select c.*
    from memory.conversations as c
    where c.user_id = v_user
        and (p_archived is null or c.archived = p_archived)
        and (c.expires_at is null or c.expires_at > now())
    order by c.updated_at desc, c.id
    limit p_limit offset p_offset;
end
$$;

revoke all on function memory.list_conversations(uuid, boolean, integer, integer)
from public, anon, authenticated, service_role;
grant execute on function memory.list_conversations(uuid, boolean, integer, integer) to authenticated, service_role;
