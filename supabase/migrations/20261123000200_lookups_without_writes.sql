-- Reads must not write. `user_id_for` and `current_conversation` create what is missing, which is
-- right for a write and wrong for a read: reading the history of an id nobody has used would
-- otherwise leave a user and an empty conversation behind. These lookups answer "none" instead.

-- Why: the read-side twin of user_id_for / register_user, with the same precedence the client
-- uses: a UUID without a tenant names the Auth user of that id when there is one, else it is an
-- external id like any other text.
create function memory.find_user_id(p_external_id text, p_tenant_id uuid default null)
returns uuid
language sql
stable
set search_path = ''
as $$
    select u.id
    from memory.users as u
    where (
        p_tenant_id is null
        and p_external_id ~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$'
        and u.id = p_external_id::uuid
        and u.auth_user_id is not null
    )
    or (u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id)
    order by (u.external_id is null) desc
    limit 1
$$;
grant execute on function memory.find_user_id(text, uuid) to service_role;

-- Why: the conversation current_conversation would pick, or none; the rule lives here once and
-- current_conversation calls it.
create function memory.find_conversation(p_user_id uuid default null, p_match jsonb default '{}')
returns setof memory.conversations
language sql
stable
set search_path = ''
as $$
    select c.*
    from memory.conversations as c
    where c.user_id = memory_private.acting_user(p_user_id)
        and not c.archived
        and (c.expires_at is null or c.expires_at > now())
        and c.metadata @> coalesce(p_match, '{}')
    order by c.updated_at desc
    limit 1
$$;
grant execute on function memory.find_conversation(uuid, jsonb) to authenticated, service_role;

create or replace function memory.current_conversation(
    p_user_id uuid default null,
    p_ttl interval default null,
    p_window_turns integer default null,
    p_match jsonb default '{}'
)
returns memory.conversations
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_conversation memory.conversations;
begin
    perform pg_advisory_xact_lock(hashtextextended('supamem.current_conversation:' || v_user::text, 0));
    select c.* into v_conversation from memory.find_conversation(v_user, p_match) as c;
    if not found then
        v_conversation := memory.create_conversation(
            v_user, p_metadata => p_match, p_ttl => p_ttl, p_window_turns => p_window_turns
        );
    end if;
    return v_conversation;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
