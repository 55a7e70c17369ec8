-- Every function that pins its search_path is plpgsql: an SQL function with a SET clause is never
-- inlined and is planned again on every call (about 50-90 µs for a one-line wrapper such as
-- memory.history), where plpgsql keeps its plans for the session.
set check_function_bodies = off;

create or replace function memory.apply_extraction(
    p_source_message_id bigint, p_memories jsonb, p_user_id uuid default null::uuid
)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path to ''
as $function$
begin
    return query
    select r.memory_id, r.outcome
    from memory_private.extract_memories(p_source_message_id, p_memories, p_user_id, true) as r;
end
$function$;

create or replace function memory.backfill_month(
    p_profile_id uuid, p_year integer, p_month integer, p_regenerate boolean default false
)
returns integer
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.backfill_month(p_profile_id, p_year, p_month, p_regenerate);
end
$function$;

create or replace function memory.count_messages(p_conversation_id uuid)
returns bigint
language plpgsql
stable
set search_path to ''
as $function$
begin
    return (
        select count(*)
        from memory.messages as m
        where m.conversation_id = p_conversation_id and (m.expires_at is null or m.expires_at > now())
    );
end
$function$;

create or replace function memory.create_session(p_user_id uuid default null::uuid)
returns uuid
language plpgsql
set search_path to ''
as $function$
begin
    return (memory.create_conversation(p_user_id)).id;
end
$function$;

create or replace function memory.find_conversation(
    p_user_id uuid default null::uuid, p_match jsonb default '{}'::jsonb
)
returns setof memory.conversations
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    select c.*
    from memory.conversations as c
    where c.user_id = memory_private.acting_user(p_user_id)
        and not c.archived
        and (c.expires_at is null or c.expires_at > now())
        and c.metadata @> coalesce(p_match, '{}')
    order by c.updated_at desc
    limit 1;
end
$function$;

create or replace function memory.find_user_id(p_external_id text, p_tenant_id uuid default null::uuid)
returns uuid
language plpgsql
stable
set search_path to ''
as $function$
begin
    return (
        select u.id
        from memory.users as u
        where (
            u.id = case
                when p_external_id ~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$' then p_external_id::uuid
            end
            and (u.tenant_id is not distinct from p_tenant_id or p_tenant_id is null and u.auth_user_id is not null)
        )
        or (u.external_id = p_external_id and u.tenant_id is not distinct from p_tenant_id)
        -- The user the UUID names before one whose external id is that text.
        order by u.external_id is not distinct from p_external_id
        limit 1
    );
end
$function$;

create or replace function memory.forget(p_memory_id uuid, p_user_id uuid default null::uuid)
returns memory.memories
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.forget(p_memory_id, p_user_id);
end
$function$;

create or replace function memory.history(
    p_conversation_id uuid, p_limit integer default 20, p_offset integer default 0, p_newest_first boolean default false
)
returns setof memory.messages
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    select h.* from memory_private.history(p_conversation_id, p_limit, p_offset, p_newest_first) as h;
end
$function$;

create or replace function memory.import_memories(p_export jsonb, p_user_id uuid default null::uuid)
returns integer
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.import_memories(p_export, p_user_id);
end
$function$;

create or replace function memory.import_messages(p_messages jsonb, p_extract boolean default false)
returns table (conversation_id uuid, imported integer, last_turn integer)
language plpgsql
set search_path to ''
as $function$
begin
    return query
    select i.* from memory_private.import_messages(p_messages, p_extract) as i;
end
$function$;

create or replace function memory.job_stats()
returns setof memory_private.job_stats
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    select * from memory_private.job_stats order by kind;
end
$function$;

create or replace function memory.kv_set(p_key text, p_value jsonb, p_user_id uuid default null::uuid)
returns memory.user_kv
language plpgsql
set search_path to ''
as $function$
declare
    v_row memory.user_kv;
begin
    insert into memory.user_kv as k (user_id, key, value)
    values (memory_private.writing_user(p_user_id), p_key, p_value)
    on conflict (user_id, key) do update set value = excluded.value, updated_at = now()
    returning k.* into v_row;
    return v_row;
end
$function$;

create or replace function memory.mark_memories_used(p_message_id bigint, p_memory_ids uuid[])
returns void
language plpgsql
set search_path to ''
as $function$
begin
    perform memory_private.record_selection(p_memory_ids, p_message_id);
end
$function$;

create or replace function memory.pin_memory(
    p_memory_id uuid, p_pinned boolean default true, p_user_id uuid default null::uuid
)
returns memory.memories
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.pin_memory(p_memory_id, p_pinned, p_user_id);
end
$function$;

create or replace function memory.profile_user_id(p_profile_id uuid)
returns uuid
language plpgsql
stable
set search_path to ''
as $function$
begin
    return (
        select p.user_id from memory.profiles as p where p.id = p_profile_id
    );
end
$function$;

create or replace function memory.queue_embeddings()
returns integer
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.queue_embeddings();
end
$function$;

create or replace function memory.remember(
    p_content text,
    p_type text,
    p_user_id uuid default null::uuid,
    p_profile_id uuid default null::uuid,
    p_category text default null::text,
    p_confidence numeric default 0.8,
    p_context jsonb default '{}'::jsonb,
    p_source_message_id bigint default null::bigint,
    p_pinned boolean default false,
    p_expires_at timestamp with time zone default null::timestamp with time zone
)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path to ''
as $function$
begin
    return query
    select r.memory_id, r.outcome
    from memory_private.remember(
        p_content, p_type, p_user_id, p_profile_id, p_category, p_confidence, p_context, p_source_message_id,
        p_pinned, p_expires_at
    ) as r;
end
$function$;

create or replace function memory.request_extraction(p_conversation_id uuid)
returns integer
language plpgsql
set search_path to ''
as $function$
begin
    return (
        select count(memory_private.enqueue_extraction(m.id))::integer
        from memory.messages as m
        where m.conversation_id = p_conversation_id and m.role = 'user'
            and (m.expires_at is null or m.expires_at > now())
            and not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id)
    );
end
$function$;

create or replace function memory.restore_memory(p_memory_id uuid, p_user_id uuid default null::uuid)
returns memory.memories
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.restore_memory(p_memory_id, p_user_id);
end
$function$;

create or replace function memory.revise_memory(
    p_memory_id uuid,
    p_content text,
    p_type text default null::text,
    p_category text default null::text,
    p_confidence numeric default null::numeric,
    p_source_message_id bigint default null::bigint,
    p_user_id uuid default null::uuid
)
returns memory.memories
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.revise_memory(
        p_memory_id, p_content, p_type, p_category, p_confidence, p_source_message_id, p_user_id
    );
end
$function$;

create or replace function memory.search_messages(
    p_query text,
    p_user_id uuid default null::uuid,
    p_conversation_id uuid default null::uuid,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.messages
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    select s.* from memory_private.search_messages(
        p_query, p_user_id, p_conversation_id, p_limit, p_offset, p_query_embedding
    ) as s;
end
$function$;

create or replace function memory.state_set(p_mode text, p_user_id uuid default null::uuid)
returns memory.user_state
language plpgsql
set search_path to ''
as $function$
declare
    v_row memory.user_state;
begin
    insert into memory.user_state as s (user_id, mode)
    values (memory_private.writing_user(p_user_id), p_mode)
    on conflict (user_id) do update set mode = excluded.mode, updated_at = now()
    returning s.* into v_row;
    return v_row;
end
$function$;

create or replace function memory.unarchive_memory(p_memory_id uuid, p_user_id uuid default null::uuid)
returns memory.memories
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.unarchive_memory(p_memory_id, p_user_id);
end
$function$;

create or replace function memory_private.administered_tenants()
returns uuid[]
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    return (
        select coalesce(array_agg(a.tenant_id), '{}')
        from memory.tenant_admins as a
        where a.user_id = (select auth.uid())
    );
end
$function$;

create or replace function memory_private.import_rows(p_messages jsonb)
returns table (
    ord bigint,
    conversation_id uuid,
    role text,
    content text,
    created_at timestamp with time zone,
    author_id uuid,
    metadata jsonb,
    tool_calls jsonb,
    suggested_values jsonb,
    suggested_actions jsonb,
    custom_payload jsonb
)
language plpgsql
immutable
set search_path to ''
as $function$
begin
    return query
    select x.ord, x.conversation_id, x.role, x.content, x.created_at, x.author_id, coalesce(x.metadata, '{}'),
        x.tool_calls, x.suggested_values, x.suggested_actions, x.custom_payload
    from rows from (
        pg_catalog.jsonb_to_recordset(p_messages) as (
            conversation_id uuid, role text, content text, created_at timestamptz, author_id uuid, metadata jsonb,
            tool_calls jsonb, suggested_values jsonb, suggested_actions jsonb, custom_payload jsonb
        )
    ) with ordinality as x (
        conversation_id, role, content, created_at, author_id, metadata, tool_calls, suggested_values,
        suggested_actions, custom_payload, ord
    );
end
$function$;

create or replace function memory_private.is_sensitive_claim(p_content text)
returns boolean
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    return exists (
        select 1
        from memory_private.sensitive_terms as t
        where to_tsvector('english'::regconfig, coalesce(p_content, '')) @@ t.query
    );
end
$function$;

create or replace function memory_private.is_time_zone(p_name text)
returns boolean
language plpgsql
immutable security definer
set search_path to ''
as $function$
begin
    return exists (select 1 from memory_private.time_zones as z where z.name = p_name);
end
$function$;

create or replace function memory_private.joined_conversations()
returns uuid[]
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    return (
        select coalesce(array_agg(p.conversation_id), '{}')
        from memory.participants as p
        where p.user_id = (select auth.uid())
    );
end
$function$;

create or replace function memory_private.local_week_start(p_at timestamp with time zone, p_time_zone text)
returns date
language plpgsql
stable
set search_path to ''
as $function$
begin
    return date_trunc('week', p_at at time zone p_time_zone)::date;
end
$function$;

create or replace function memory_private.long_term_profile(p_conversation_id uuid)
returns uuid
language plpgsql
stable
set search_path to ''
as $function$
begin
    return (
        select c.profile_id
        from memory.conversations as c
        inner join memory.profiles as p on c.profile_id = p.id and c.user_id = p.user_id and p.is_primary
        inner join memory.users as u on c.user_id = u.id and not u.memory_paused
        where c.id = p_conversation_id and c.remember
    );
end
$function$;

create or replace function memory_private.memory_profile(p_user_id uuid, p_message_id bigint, p_profile_id uuid)
returns uuid
language plpgsql
stable security definer
set search_path to ''
as $function$
begin
    return (
        -- A signed-in caller learns nothing about anyone else's profiles.
        select case when (select auth.uid()) is null or p_user_id = (select auth.uid()) then coalesce(
            (select case when c.user_id = p_user_id then c.profile_id else p.profile_id end
             from memory.messages as m
             join memory.conversations as c on c.id = m.conversation_id
             left join memory.participants as p on p.conversation_id = c.id and p.user_id = p_user_id
             where m.id = p_message_id and (c.user_id = p_user_id or p.user_id is not null)),
            p_profile_id,
            (select p.id from memory.profiles as p where p.user_id = p_user_id and p.is_primary)
        ) end
    );
end
$function$;

create or replace function memory_private.next_messages(p_from bigint, p_batch integer)
returns bigint
language plpgsql
stable
set search_path to ''
as $function$
begin
    return (
        select max(n.id) from (select m.id from memory.messages as m where m.id > p_from order by m.id limit p_batch) as n
    );
end
$function$;

create or replace function memory_private.reinforce(
    p_memory_ids uuid[], p_confidence numeric default null::numeric, p_user_id uuid default null::uuid
)
returns void
language plpgsql
security definer
set search_path to ''
as $function$
begin
    update memory.memories as m
    set reference_count = m.reference_count + 1,
        last_referenced_at = now(),
        confidence = greatest(m.confidence, coalesce(p_confidence, m.confidence))
    where m.id = any(p_memory_ids) and m.user_id = coalesce((select auth.uid()), m.user_id)
        and (p_user_id is null or m.user_id = p_user_id);
end
$function$;

create or replace function memory_private.trusted_caller()
returns boolean
language plpgsql
stable
set search_path to ''
as $function$
begin
    return pg_has_role(coalesce(nullif(current_setting('role'), 'none'), session_user), 'service_role', 'usage');
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text)
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    (
        select 'message', m.id::text, coalesce(right(p.content, c.chars) || e'\n', '') || m.content
        from memory.messages as m
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral memory_private.message_before(m.conversation_id, m.turn_number, m.role) as p
            on c.chars > 0
        where m.user_id = p_user_id and not exists (
            select 1 from memory_private.message_embeddings as e
            where e.message_id = m.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by m.id desc
        limit p_limit
    )
    union all
    (
        select 'memory', mm.id::text, mm.content
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null and not exists (
            select 1 from memory_private.memory_embeddings as e
            where e.memory_id = mm.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by mm.created_at desc, mm.id
        limit p_limit
    )
    limit p_limit;
end
$function$;


revoke all on function memory.apply_extraction(bigint, jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.apply_extraction(bigint, jsonb, uuid) to service_role;
revoke all on function memory.backfill_month(uuid, integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory.backfill_month(uuid, integer, integer, boolean) to service_role, authenticated;
revoke all on function memory.count_messages(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.count_messages(uuid) to authenticated, service_role;
revoke all on function memory.create_session(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.create_session(uuid) to authenticated, service_role;
revoke all on function memory.find_conversation(uuid, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.find_conversation(uuid, jsonb) to authenticated, service_role;
revoke all on function memory.find_user_id(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.find_user_id(text, uuid) to service_role;
revoke all on function memory.forget(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.forget(uuid, uuid) to authenticated, service_role;
revoke all on function memory.history(uuid, integer, integer, boolean) from public, anon, authenticated, service_role;
grant execute on function memory.history(uuid, integer, integer, boolean) to authenticated, service_role;
revoke all on function memory.import_memories(jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.import_memories(jsonb, uuid) to service_role, authenticated;
revoke all on function memory.import_messages(jsonb, boolean) from public, anon, authenticated, service_role;
grant execute on function memory.import_messages(jsonb, boolean) to service_role;
revoke all on function memory.job_stats() from public, anon, authenticated, service_role;
grant execute on function memory.job_stats() to service_role;
revoke all on function memory.kv_set(text, jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.kv_set(text, jsonb, uuid) to authenticated, service_role;
revoke all on function memory.mark_memories_used(bigint, uuid[]) from public, anon, authenticated, service_role;
grant execute on function memory.mark_memories_used(bigint, uuid[]) to authenticated, service_role;
revoke all on function memory.pin_memory(uuid, boolean, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.pin_memory(uuid, boolean, uuid) to authenticated, service_role;
revoke all on function memory.profile_user_id(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.profile_user_id(uuid) to authenticated, service_role;
revoke all on function memory.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory.queue_embeddings() to service_role;
revoke all on function memory.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
from public, anon, authenticated, service_role;
grant execute on function memory.remember(
    text, text, uuid, uuid, text, numeric, jsonb, bigint, boolean, timestamp with time zone
)
to authenticated, service_role;
revoke all on function memory.request_extraction(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.request_extraction(uuid) to authenticated, service_role;
revoke all on function memory.restore_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.restore_memory(uuid, uuid) to authenticated, service_role;
revoke all on function memory.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.revise_memory(uuid, text, text, text, numeric, bigint, uuid) to authenticated,
service_role;
revoke all on function memory.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
revoke all on function memory.state_set(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.state_set(text, uuid) to authenticated, service_role;
revoke all on function memory.unarchive_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.unarchive_memory(uuid, uuid) to authenticated, service_role;
revoke all on function memory_private.administered_tenants() from public, anon, authenticated, service_role;
grant execute on function memory_private.administered_tenants() to authenticated, service_role;
revoke all on function memory_private.import_rows(jsonb) from public, anon, authenticated, service_role;
revoke all on function memory_private.is_sensitive_claim(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.is_sensitive_claim(text) to authenticated, service_role;
revoke all on function memory_private.is_time_zone(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.is_time_zone(text) to authenticated, service_role;
revoke all on function memory_private.joined_conversations() from public, anon, authenticated, service_role;
grant execute on function memory_private.joined_conversations() to authenticated, service_role;
revoke all on function memory_private.local_week_start(timestamp with time zone, text)
from public, anon, authenticated, service_role;
grant execute on function memory_private.local_week_start(timestamp with time zone, text) to authenticated,
service_role;
revoke all on function memory_private.long_term_profile(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.long_term_profile(uuid) to service_role;
revoke all on function memory_private.memory_profile(uuid, bigint, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.memory_profile(uuid, bigint, uuid) to authenticated, service_role;
revoke all on function memory_private.next_messages(bigint, integer) from public, anon, authenticated, service_role;
revoke all on function memory_private.reinforce(uuid[], numeric, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.reinforce(uuid[], numeric, uuid) to authenticated, service_role;
revoke all on function memory_private.trusted_caller() from public, anon, authenticated, service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
