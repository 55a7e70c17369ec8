-- Why: history moved from another store (or loaded for a benchmark) would otherwise go in one
-- message at a time, each taking the conversation's row lock, updating it and queueing jobs. An
-- import numbers a whole batch's turns set-based, updates and trims each conversation once, and
-- queues extraction only when asked (through the same gate as a turn); it queues no summaries or
-- titles. The per-row numbering trigger stands aside only for the import's own insert, which it
-- recognises by a row of memory_private.imports that no caller but the import can write.
create table memory_private.imports (
    xact xid8 primary key default pg_catalog.pg_current_xact_id()
);

comment on table memory_private.imports is
'Transactions inside memory.import_messages; the row lives and dies within the import''s transaction.';

alter table memory_private.imports enable row level security;

revoke all on memory_private.imports from public, anon, authenticated, service_role;

-- Why: the message triggers ask this after the setting says an import may be running, so a
-- caller who sets memory.importing themselves changes nothing. plpgsql keeps its plan: it is asked
-- once per imported row (an sql function with a SET clause is planned on every call).
create function memory_private.importing()
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
begin
    return exists (select 1 from memory_private.imports as i where i.xact = pg_catalog.pg_current_xact_id());
end
$$;

revoke all on function memory_private.importing() from public, anon, authenticated, service_role;

-- Why: the import's messages in their order, typed; read once per statement of the import.
create function memory_private.import_rows(p_messages jsonb)
returns table (
    ord bigint, conversation_id uuid, role text, content text, created_at timestamptz, author_id uuid,
    metadata jsonb, tool_calls jsonb, suggested_values jsonb, suggested_actions jsonb, custom_payload jsonb
)
language plpgsql
immutable
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.import_rows(jsonb) from public, anon, authenticated, service_role;

create function memory_private.import_messages(p_messages jsonb, p_extract boolean)
returns table (conversation_id uuid, imported integer, last_turn integer)
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_bad record;
    v_before jsonb;
begin
    if p_messages is null or jsonb_typeof(p_messages) <> 'array' or jsonb_array_length(p_messages) not between 1 and 10000 then
        raise exception using errcode = '22023', message = 'messages must be a JSON array of 1 to 10000 messages';
    end if;
    select e.ord, e.doc into v_bad
    from jsonb_array_elements(p_messages) with ordinality as e (doc, ord)
    where jsonb_typeof(e.doc) <> 'object'
        or not e.doc ?& array['conversation_id', 'role', 'content']
        or exists (
            select 1 from jsonb_object_keys(e.doc) as k (name)
            where k.name not in (
                'conversation_id', 'role', 'content', 'created_at', 'author_id', 'metadata', 'tool_calls',
                'suggested_values', 'suggested_actions', 'custom_payload'
            )
        )
    order by e.ord
    limit 1;
    if found then
        raise exception using errcode = '22023', message = format('message %s is not a message', v_bad.ord),
            detail = left(v_bad.doc::text, 200),
            hint = 'Each message is an object with conversation_id, role and content, and may have created_at, '
                || 'author_id, metadata, tool_calls, suggested_values, suggested_actions and custom_payload.';
    end if;
    -- What the table would refuse naming only a constraint, said of the message: its role, its text, and
    -- JSON nested past the writers' 64 levels (memory_private.check_json; a message adds one).
    select e.ord, f.fault into v_bad
    from jsonb_array_elements(p_messages) with ordinality as e (doc, ord)
    cross join lateral (
        select case
            when e.doc ->> 'role' is distinct from 'user' and e.doc ->> 'role' is distinct from 'assistant'
                then 'has a role other than user or assistant'
            when jsonb_typeof(e.doc -> 'content') is distinct from 'string' or e.doc ->> 'content' !~ '[^[:space:]]'
                then 'has no content'
            when length(e.doc ->> 'content') > 100000 then 'is longer than 100000 characters'
            when jsonb_path_exists(e.doc, 'strict $.**{65}') then 'nests deeper than 64 levels'
        end as fault
    ) as f
    where f.fault is not null
    order by e.ord
    limit 1;
    if found then
        raise exception using errcode = '22023', message = format('message %s %s', v_bad.ord, v_bad.fault);
    end if;
    -- Locked in one order, so imports and turns into the same conversations cannot deadlock; the
    -- turn each conversation had is kept to find the imported turns afterwards.
    select jsonb_object_agg(l.id, l.last_turn) into v_before
    from (
        select c.id, c.last_turn from memory.conversations as c
        where c.id in (select r.conversation_id from memory_private.import_rows(p_messages) as r)
        order by c.id
        for update
    ) as l;
    select r.conversation_id as id, c.id is not null and c.archived as archived into v_bad
    from memory_private.import_rows(p_messages) as r
    left join memory.conversations as c on c.id = r.conversation_id
    where c.id is null or c.expires_at <= now() or c.archived
    order by r.ord
    limit 1;
    if found and v_bad.archived then
        raise exception using errcode = '55000', message = 'conversation is archived',
            detail = format('conversation %s', v_bad.id), hint = 'Unarchive it before adding messages.';
    elsif found then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', v_bad.id);
    end if;
    perform pg_catalog.set_config('memory.importing', 'on', true);
    insert into memory_private.imports default values;
    -- Turns are numbered as memory_private.assign_turn numbers them one by one: an answer joins the
    -- turn its question opened (or the conversation's open turn, for the first message), anything
    -- else opens the next turn.
    with ordered as (
        select r.*, lag(r.role) over (partition by r.conversation_id order by r.ord) as previous_role
        from memory_private.import_rows(p_messages) as r
    ),
    numbered as (
        select r.*, c.user_id, c.tenant_id, c.ttl,
            c.last_turn + sum(
                case when r.role = 'assistant' and coalesce(
                    r.previous_role = 'user',
                    c.last_turn > 0 and not exists (
                        select 1 from memory.messages as m
                        where m.conversation_id = c.id and m.turn_number = c.last_turn and m.role = 'assistant'
                    )
                ) then 0 else 1 end
            ) over (partition by r.conversation_id order by r.ord rows unbounded preceding) as turn_number
        from ordered as r
        join memory.conversations as c on c.id = r.conversation_id
    ),
    inserted as (
        insert into memory.messages (
            conversation_id, user_id, tenant_id, author_id, role, content, turn_number, tool_calls,
            suggested_values, suggested_actions, custom_payload, metadata, created_at, expires_at
        )
        select n.conversation_id, n.user_id, n.tenant_id, n.author_id, n.role, n.content, n.turn_number,
            n.tool_calls, n.suggested_values, n.suggested_actions, n.custom_payload, n.metadata,
            coalesce(n.created_at, now()), now() + n.ttl
        from numbered as n
        order by n.ord
        returning memory.messages.conversation_id, memory.messages.turn_number
    )
    update memory.conversations as c
    set last_turn = i.last_turn, updated_at = now(), expires_at = now() + c.ttl
    from (
        select s.conversation_id, max(s.turn_number) as last_turn from inserted as s group by s.conversation_id
    ) as i
    where c.id = i.conversation_id;
    delete from memory_private.imports as i where i.xact = pg_catalog.pg_current_xact_id();
    perform pg_catalog.set_config('memory.importing', '', true);
    -- The window keeps the newest window_turns turns: what the import pushed out leaves at once.
    delete from memory.messages as m
    using memory.conversations as c
    where c.id in (select (jsonb_object_keys(v_before))::uuid)
        and c.window_turns is not null
        and m.conversation_id = c.id
        and m.turn_number > (v_before ->> c.id::text)::integer - c.window_turns
        and m.turn_number <= c.last_turn - c.window_turns;
    -- What stays waits for its vector, as a message written one by one does.
    insert into memory_private.pending_embeddings (user_id, message_id)
    select m.user_id, m.id
    from memory.messages as m
    where m.conversation_id in (select (jsonb_object_keys(v_before))::uuid)
        and m.turn_number > (v_before ->> m.conversation_id::text)::integer;
    if p_extract then
        perform memory_private.queue_extraction(m.id)
        from memory.messages as m
        where m.conversation_id in (select (jsonb_object_keys(v_before))::uuid)
            and m.turn_number > (v_before ->> m.conversation_id::text)::integer
            and m.role = 'user';
    end if;
    return query
    select r.conversation_id, count(*)::integer, max(c.last_turn)
    from memory_private.import_rows(p_messages) as r
    join memory.conversations as c on c.id = r.conversation_id
    group by r.conversation_id
    order by r.conversation_id;
end
$$;

revoke all on function memory_private.import_messages(jsonb, boolean) from public, anon, authenticated, service_role;
grant execute on function memory_private.import_messages(jsonb, boolean) to service_role;

create function memory.import_messages(p_messages jsonb, p_extract boolean default false)
returns table (conversation_id uuid, imported integer, last_turn integer)
language plpgsql
set search_path = ''
as $$
begin
    return query
    select i.* from memory_private.import_messages(p_messages, p_extract) as i;
end
$$;

comment on function memory.import_messages(jsonb, boolean) is
'Imports up to 10,000 messages (a JSON array, in order) into existing conversations: turns numbered set-based, '
'each conversation updated and trimmed once. With p_extract, user messages are queued for extraction through '
'the gate. Service role only.';

revoke all on function memory.import_messages(jsonb, boolean) from public, anon, authenticated, service_role;
grant execute on function memory.import_messages(jsonb, boolean) to service_role;
