-- Finding memories (seed 004's Settings search, seed 002's GET /api/memories filters), moving
-- them out and back in (export / import), and erasing a user.

-- Why: one search for every screen: full text for words, trigram word similarity so a typo
-- ("marathn") still finds its memory; filters narrow it, and it pages, best match first. It
-- returns plain memory rows, so the Data API can select columns and embed from them.
create function memory.search_memories(
    p_query text default null,
    p_user_id uuid default null,
    p_type text default null,
    p_category text default null,
    p_profile_id uuid default null,
    p_conversation_id uuid default null,
    p_created_from timestamptz default null,
    p_created_to timestamptz default null,
    p_status text default 'active',
    p_limit integer default 20,
    p_offset integer default 0
)
returns setof memory.memories
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
begin
    if p_status not in ('active', 'archived', 'deleted', 'superseded', 'all') then
        raise exception using errcode = '22023', message = format('unknown status %L', p_status),
            hint = 'status is one of active, archived, deleted, superseded, all';
    end if;
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset >= 0';
    end if;
    return query
    select m.*
    from memory.memories as m
    where m.user_id = v_user
        and (p_query is null or m.search @@ v_query or extensions.word_similarity(p_query, m.content) >= 0.4)
        and (p_type is null or m.type = p_type)
        and (p_category is null or m.category = p_category)
        and (p_profile_id is null or m.profile_id = p_profile_id)
        and (p_conversation_id is null or m.source_conversation_id = p_conversation_id)
        and (p_created_from is null or m.created_at >= p_created_from)
        and (p_created_to is null or m.created_at < p_created_to)
        and case p_status
            when 'active' then m.active and not m.archived and (m.expires_at is null or m.expires_at > now())
            when 'archived' then m.archived and m.deleted_at is null
            when 'deleted' then m.deleted_at is not null
            when 'superseded' then m.superseded_by is not null
            else true
        end
    order by
        greatest(
            case when v_query is not null then ts_rank_cd(m.search, v_query) else 0 end,
            case when p_query is not null then extensions.word_similarity(p_query, m.content) else 0 end
        ) desc,
        m.created_at desc,
        m.id
    limit p_limit offset p_offset;
end
$$;
grant execute on function memory.search_memories(
    text, uuid, text, text, uuid, uuid, timestamptz, timestamptz, text, integer, integer
) to authenticated, service_role;

-- Why: seed 004's "Export memory archive (all fields, for portability)": every memory of the
-- user with every column, the profiles they belong to and the user's memory settings, as one
-- JSON document.
create function memory.export_memories(p_user_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    return jsonb_build_object(
        'format', 'supamem.memories',
        'version', 1,
        'user_id', v_user,
        'exported_at', now(),
        'settings', (
            select jsonb_build_object('memory_paused', u.memory_paused, 'long_term_opt_in', u.long_term_opt_in)
            from memory.users as u where u.id = v_user
        ),
        'profiles', coalesce((
            select jsonb_agg(to_jsonb(p) order by p.created_at, p.id)
            from memory.profiles as p where p.user_id = v_user
        ), '[]'),
        'memories', coalesce((
            select jsonb_agg(to_jsonb(m) - 'search' order by m.created_at, m.id)
            from memory.memories as m where m.user_id = v_user
        ), '[]')
    );
end
$$;
grant execute on function memory.export_memories(uuid) to authenticated, service_role;

-- Why: the way back in, for a user restoring their own archive (after an erase, or into a new
-- project). Records keep their ids, so importing the same export twice adds nothing, and a record
-- whose id is already taken (e.g. by the original, still present) is skipped. Links to
-- conversations or messages that no longer exist (or whose gate is now closed) are dropped rather
-- than failing the import. Settings come back too, but an import never un-pauses memory. The cap
-- applies as for any write. Returns how many memories were added.
create function memory.import_memories(p_export jsonb, p_user_id uuid default null)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_added integer;
begin
    if p_export ->> 'format' is distinct from 'supamem.memories' or (p_export ->> 'version')::integer <> 1 then
        raise exception using errcode = '22023', message = 'not a supamem memories export (format 1)';
    end if;
    insert into memory.profiles (id, user_id, name, is_primary, timezone, attributes, created_at)
    select p.id, v_user, p.name,
        p.is_primary and not exists (select 1 from memory.profiles as o where o.user_id = v_user and o.is_primary),
        p.timezone, p.attributes, p.created_at
    from jsonb_populate_recordset(null::memory.profiles, p_export -> 'profiles') as p
    where not exists (select 1 from memory.profiles as o where o.id = p.id);

    update memory.users as u
    set memory_paused = u.memory_paused or coalesce((p_export #>> '{settings,memory_paused}')::boolean, false),
        long_term_opt_in = coalesce((p_export #>> '{settings,long_term_opt_in}')::boolean, u.long_term_opt_in)
    where u.id = v_user;

    insert into memory.memories (
        id, user_id, profile_id, content, type, category, confidence, context, origin_mode,
        source_conversation_id, source_message_id, turn_index, pinned, active, archived, deleted_at,
        expires_at, created_at, updated_at, last_referenced_at, reference_count
    )
    select m.id, v_user, m.profile_id, m.content, m.type, m.category, m.confidence, m.context, m.origin_mode,
        (select c.id from memory.conversations as c where c.id = m.source_conversation_id and c.user_id = v_user),
        case when memory_private.memory_gate(v_user, m.source_message_id) is null then m.source_message_id end,
        m.turn_index, m.pinned, m.active and m.superseded_by is null, m.archived, m.deleted_at,
        m.expires_at, m.created_at, coalesce(m.updated_at, now()), m.last_referenced_at, m.reference_count
    from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as m
    where not exists (select 1 from memory.memories as o where o.id = m.id)
    order by m.created_at, m.id;
    get diagnostics v_added = row_count;

    -- Successor links are restored once every record is back.
    update memory.memories as m set superseded_by = e.superseded_by, active = false, updated_at = e.updated_at
    from jsonb_populate_recordset(null::memory.memories, p_export -> 'memories') as e
    where m.id = e.id and m.user_id = v_user and e.superseded_by is not null and m.superseded_by is null
        and exists (select 1 from memory.memories as s where s.id = e.superseded_by and s.user_id = v_user);
    perform memory_private.enforce_memory_cap(v_user, p.id) from memory.profiles as p where p.user_id = v_user;
    return v_added;
end
$$;
grant execute on function memory.import_memories(jsonb, uuid) to service_role;

-- Why: the right to be forgotten in one call: the user row goes and with it, by cascade, their
-- conversations, messages, memories, history, summaries and state; messages they wrote in other
-- people's conversations go too. Nothing of anyone else's is touched.
create function memory.erase_user(p_user_id uuid default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_authored integer;
    v_memories integer;
    v_conversations integer;
begin
    select count(*) into v_memories from memory.memories as m where m.user_id = v_user;
    select count(*) into v_conversations from memory.conversations as c where c.user_id = v_user;
    delete from memory.messages as m where m.author_id = v_user and m.user_id <> v_user;
    get diagnostics v_authored = row_count;
    delete from memory.users as u where u.id = v_user;
    if not found then
        raise exception using errcode = 'P0002', message = 'user not found';
    end if;
    return jsonb_build_object(
        'user_id', v_user, 'memories', v_memories, 'conversations', v_conversations,
        'messages_in_other_conversations', v_authored
    );
end
$$;
grant execute on function memory.erase_user(uuid) to service_role;

revoke execute on all routines in schema memory, memory_private from public;
