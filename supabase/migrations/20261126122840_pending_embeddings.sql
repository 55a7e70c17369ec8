-- Every message notes itself for a vector (memory_private.pending_embeddings) when it is written,
-- and again when its vector is dropped; an embed job reads its user's notes instead of looking
-- through the user's whole history for messages without a vector, and the minutely scan queues
-- the users with notes instead of reading the messages written since its last run. The messages
-- waiting today are noted here, and the scan's position in the messages goes.
drop function if exists memory_private.queue_embeddings(p_batch integer);

create table memory_private.pending_embeddings (
    user_id uuid not null,
    message_id bigint not null
);


alter table memory_private.pending_embeddings enable row level security;

create unique index pending_embeddings_pkey on memory_private.pending_embeddings using btree (user_id, message_id);

alter table memory_private.pending_embeddings
add constraint pending_embeddings_pkey primary key using index pending_embeddings_pkey;

alter table memory_private.pending_embeddings add constraint pending_embeddings_user_id_fkey foreign key (
    user_id
) references memory.users (id) on delete cascade not valid;

alter table memory_private.pending_embeddings validate constraint "pending_embeddings_user_id_fkey";

set check_function_bodies = off;

create or replace function memory_private.queue_embeddings()
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users integer;
begin
    if not memory_private.setting('job_kinds') ? 'embed' then
        return 0;
    end if;
    with recursive noted as (
        (select n.user_id from memory_private.pending_embeddings as n order by n.user_id limit 1)
        union all
        select (
            select n.user_id from memory_private.pending_embeddings as n
            where n.user_id > d.user_id
            order by n.user_id
            limit 1
        )
        from noted as d
        where d.user_id is not null
    )
    select count(memory_private.enqueue('embed', '{}', 'embed:' || d.user_id, d.user_id, null, true))::integer
    into v_users
    from noted as d
    where d.user_id is not null and not exists (
            select 1 from memory_private.jobs as j
            where j.kind = 'embed' and j.dedup_key = 'embed:' || d.user_id and j.status in ('queued', 'running')
        );
    return v_users;
end
$function$;

create or replace function memory.embedding_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path to ''
as $function$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
begin
    if v_job.kind <> 'embed' then
        raise exception using errcode = '22023', message = format('job %s is a %s job, not embed', p_job_id, v_job.kind);
    end if;
    -- Notes of messages deleted before they got a vector are dropped, so a user left with only
    -- those is not queued again.
    delete from memory_private.pending_embeddings as n
    where n.user_id = v_job.user_id and not exists (select 1 from memory.messages as m where m.id = n.message_id);
    return jsonb_build_object(
        'kind', v_job.kind,
        'model', memory_private.setting('embedding_model') ->> 0,
        'dimensions', (memory_private.setting('embedding_dimensions'))::integer,
        'items', coalesce((
            select jsonb_agg(jsonb_build_object('kind', u.kind, 'id', u.id, 'text', u.content))
            from memory_private.unembedded(v_job.user_id, (memory_private.setting('embedding_batch'))::integer) as u
        ), '[]')
    );
end
$function$;

create or replace function memory.finish_embeddings(p_job_id bigint, p_worker text, p_model text, p_items jsonb)
returns jsonb
language plpgsql
set search_path to ''
as $function$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_dimensions integer := (memory_private.setting('embedding_dimensions'))::integer;
    v_current boolean := p_model = memory_private.setting('embedding_model') ->> 0;
    v_bad jsonb;
    v_stored integer := 0;
    v_memories integer;
begin
    if jsonb_typeof(p_items) is distinct from 'array' then
        raise exception using errcode = '22023', message = 'items must be a JSON array';
    end if;
    select i.item into v_bad
    from jsonb_array_elements(p_items) as i (item)
    where jsonb_typeof(i.item) <> 'object'
        or i.item ->> 'kind' is null or i.item ->> 'kind' not in ('message', 'memory')
        or i.item ->> 'id' is null
        or jsonb_typeof(i.item -> 'embedding') is distinct from 'array'
        or jsonb_array_length(i.item -> 'embedding') <> v_dimensions
    limit 1;
    if v_bad is not null then
        raise exception using errcode = '22023',
            message = format('each item needs kind (message or memory), id and an embedding of %s numbers', v_dimensions),
            detail = left(v_bad::text, 200);
    end if;
    if v_current then
        -- Rows deleted since the input was read are skipped by the joins.
        insert into memory_private.message_embeddings as e (message_id, user_id, model, embedding)
        select m.id, m.user_id, p_model, (i.item ->> 'embedding')::extensions.vector
        from jsonb_array_elements(p_items) as i (item)
        join memory.messages as m on m.id::text = i.item ->> 'id' and m.user_id = v_job.user_id
        where i.item ->> 'kind' = 'message'
        on conflict (message_id) do update
        set model = excluded.model, embedding = excluded.embedding, created_at = now();
        get diagnostics v_stored = row_count;
        insert into memory_private.memory_embeddings as e (memory_id, user_id, model, embedding)
        select mm.id, mm.user_id, p_model, (i.item ->> 'embedding')::extensions.vector
        from jsonb_array_elements(p_items) as i (item)
        join memory.memories as mm on mm.id::text = i.item ->> 'id' and mm.user_id = v_job.user_id
        where i.item ->> 'kind' = 'memory'
        on conflict (memory_id) do update
        set model = excluded.model, embedding = excluded.embedding, created_at = now();
        get diagnostics v_memories = row_count;
        v_stored := v_stored + v_memories;
        -- The batch's notes go, stored or deleted meanwhile.
        delete from memory_private.pending_embeddings as n
        where n.user_id = v_job.user_id and n.message_id in (
            select (i.item ->> 'id')::bigint
            from jsonb_array_elements(p_items) as i (item)
            where i.item ->> 'kind' = 'message' and i.item ->> 'id' ~ '^[0-9]{1,18}$'
        );
    end if;
    -- Rows committed before this check are seen; a later one waits for the user's next job.
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('stored', v_stored, 'model', p_model));
    if exists (select 1 from memory_private.unembedded(v_job.user_id, 1)) then
        perform memory_private.enqueue('embed', '{}', 'embed:' || v_job.user_id, v_job.user_id, null, true);
    end if;
    return jsonb_build_object('stored', v_stored, 'current_model', v_current);
end
$function$;

create or replace function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid;
begin
    if p_model is null or p_model !~ '^[[:print:]]{1,200}$' then
        raise exception using errcode = '22023', message = 'model must be 1..200 printable characters';
    end if;
    if p_dimensions is null or p_dimensions < 1 or p_dimensions > 2000 then
        raise exception using errcode = '22023', message = 'dimensions must be 1..2000 (the HNSW limit)';
    end if;
    if memory_private.setting('embedding_model') ->> 0 = p_model
        and (memory_private.setting('embedding_dimensions'))::integer = p_dimensions then
        return;
    end if;
    perform memory_private.ensure_embedding_indexes(p_model, p_dimensions);
    update memory_private.settings set value = to_jsonb(p_model) where key = 'embedding_model';
    update memory_private.settings set value = to_jsonb(p_dimensions) where key = 'embedding_dimensions';
    insert into memory_private.pending_embeddings (user_id, message_id)
    select m.user_id, m.id from memory.messages as m
    on conflict do nothing;
    for v_user in select u.id from memory.users as u loop
        perform memory_private.enqueue('embed', '{}', 'embed:' || v_user, v_user, null, true);
    end loop;
end
$function$;

create or replace function memory_private.assign_turn()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_conversation memory.conversations;
    v_next integer;
    v_join boolean;
    v_interval integer;
    v_question bigint;
begin
    -- memory.import_messages numbers, locks and trims its batch itself. The setting is unset (null)
    -- on a connection that never imported: coalesced, so only an import's rows ask importing().
    if coalesce(current_setting('memory.importing', true), '') = 'on' and memory_private.importing() then
        return new;
    end if;
    select c.* into v_conversation from memory.conversations as c where c.id = new.conversation_id for update;
    if not found or v_conversation.expires_at <= now() then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if (select auth.uid()) is not null and v_conversation.user_id <> (select auth.uid()) and not exists (
        select 1 from memory.participants as p
        where p.conversation_id = new.conversation_id and p.user_id = (select auth.uid())
    ) then
        -- A caller who cannot read the conversation learns nothing, not even that it exists.
        if v_conversation.tenant_id = any(memory_private.administered_tenants()) then
            raise exception using errcode = '42501', message = 'only the owner and participants write to a conversation';
        end if;
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if v_conversation.archived then
        raise exception using errcode = '55000', message = 'conversation is archived',
            hint = 'Unarchive it before adding messages.';
    end if;
    -- An answer joins the open turn; a user message, or an answer with no open turn, opens one.
    v_join := new.role = 'assistant' and v_conversation.last_turn > 0 and not exists (
        select 1 from memory.messages as m
        where m.conversation_id = new.conversation_id
            and m.turn_number = v_conversation.last_turn
            and m.role = 'assistant'
    );
    v_next := case when v_join then v_conversation.last_turn else v_conversation.last_turn + 1 end;
    if new.turn_number < 1 then
        raise exception using errcode = '23514', message = format('turn number %s must be positive', new.turn_number);
    end if;
    if new.turn_number is not null and new.turn_number <> v_next then
        if new.turn_number <= v_conversation.last_turn then
            raise exception using errcode = '23505', message = format('turn %s already exists', new.turn_number),
                detail = format('the next turn number for this %s message is %s', new.role, v_next);
        end if;
        raise exception using errcode = '23514', message = format('turn %s would leave a gap', new.turn_number),
            detail = format('the next turn number for this %s message is %s', new.role, v_next);
    end if;
    new.turn_number := v_next;
    new.user_id := v_conversation.user_id;
    new.tenant_id := v_conversation.tenant_id;
    new.created_at := now();
    new.expires_at := now() + v_conversation.ttl;
    -- The message waits for its vector; the minutely scan queues its user's embed job.
    insert into memory_private.pending_embeddings (user_id, message_id) values (new.user_id, new.id);
    -- Only a new turn moves the conversation (an answer joining its turn needs no second update),
    -- and pushes exactly one turn out of the window: older ones left it on earlier turns.
    if not v_join then
        update memory.conversations as c
        set last_turn = v_next, updated_at = now(), expires_at = now() + c.ttl
        where c.id = new.conversation_id;
        if v_conversation.window_turns is not null then
            delete from memory.messages as m
            where m.conversation_id = new.conversation_id
                and m.turn_number = v_next - v_conversation.window_turns;
        end if;
    end if;
    if new.role = 'assistant' then
        select m.id into v_question from memory.messages as m
        where m.conversation_id = new.conversation_id and m.turn_number = v_next and m.role = 'user';
        if v_question is not null and memory_private.extraction_author(v_question) is not null then
            -- A regenerated answer (the first deleted, a second added) finds its question noted already.
            insert into memory_private.pending_extractions (message_id) values (v_question) on conflict do nothing;
        end if;
        v_interval := (memory_private.setting('summary_interval'))::integer;
        if v_next % v_interval = 0 then
            perform memory_private.enqueue(
                'summarize_conversation',
                jsonb_build_object(
                    'conversation_id', new.conversation_id, 'from_turn', v_next - v_interval + 1, 'to_turn', v_next
                ),
                'conversation:' || new.conversation_id || ':' || v_next, new.user_id
            );
        end if;
        if v_next = 1 and v_conversation.title is null then
            perform memory_private.enqueue(
                'title', jsonb_build_object('conversation_id', new.conversation_id),
                'title:' || new.conversation_id, new.user_id
            );
        end if;
    end if;
    return new;
end
$function$;

create or replace function memory_private.context_deleted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users uuid[];
begin
    -- Users without vectors (embeddings unused, or not yet embedded) have none to drop.
    if not exists (
        select 1 from memory_private.message_embeddings as e
        where e.user_id in (select o.user_id from old_messages as o)
    ) then
        return null;
    end if;
    -- Each deleted message's next one, looked for only up to the next deleted message: a run of
    -- deleted messages (a sweep, a trim) is read once, not once per message.
    with deleted as (
        select o.conversation_id, o.turn_number, o.role,
            lead(o.turn_number) over w as next_turn, lead(o.role) over w as next_role
        from old_messages as o
        window w as (partition by o.conversation_id order by o.turn_number, o.role desc)
    ),
    dropped as (
        delete from memory_private.message_embeddings as e
        using deleted as d
        cross join lateral memory_private.message_after(
            d.conversation_id, d.turn_number, d.role, d.next_turn, d.next_role
        ) as n
        where e.message_id = n.id
        returning e.user_id, e.message_id
    ),
    noted as (
        insert into memory_private.pending_embeddings (user_id, message_id)
        select d.user_id, d.message_id from dropped as d
        on conflict do nothing
    )
    select array_agg(distinct d.user_id) into v_users from dropped as d;
    -- A user whose embed job is queued or running needs no call (enqueue would leave it as it is).
    perform memory_private.enqueue('embed', '{}', 'embed:' || u.id, u.id, null, true)
    from unnest(v_users) as u (id)
    where not exists (
        select 1 from memory_private.jobs as j
        where j.kind = 'embed' and j.dedup_key = 'embed:' || u.id and j.status in ('queued', 'running')
    );
    return null;
end
$function$;

create or replace function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if tg_op = 'UPDATE' then
        if tg_table_name = 'messages' then
            with next as (
                select a.id from memory_private.message_after(new.conversation_id, new.turn_number, new.role) as a
            ),
            dropped as (
                delete from memory_private.message_embeddings as e
                where e.message_id = new.id or e.message_id in (select x.id from next as x)
            )
            insert into memory_private.pending_embeddings (user_id, message_id)
            select new.user_id, new.id
            union all
            select new.user_id, x.id from next as x
            on conflict do nothing;
        else
            delete from memory_private.memory_embeddings as e where e.memory_id = new.id;
        end if;
    end if;
    perform memory_private.enqueue('embed', '{}', 'embed:' || new.user_id, new.user_id, null, true);
    return null;
end
$function$;

create or replace function memory_private.import_messages(p_messages jsonb, p_extract boolean)
returns table (conversation_id uuid, imported integer, last_turn integer)
language plpgsql
security definer
set search_path to ''
as $function$
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
        from memory_private.pending_embeddings as n
        join memory.messages as m on m.id = n.message_id
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral memory_private.message_before(m.conversation_id, m.turn_number, m.role) as p
            on c.chars > 0
        where n.user_id = p_user_id
        order by n.message_id desc
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

grant delete on table memory_private.pending_embeddings to service_role;

grant insert on table memory_private.pending_embeddings to service_role;

grant select on table memory_private.pending_embeddings to service_role;


revoke all on function memory.embedding_input(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory.embedding_input(bigint, text) to service_role;
revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public,
anon,
authenticated,
service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
revoke all on function memory_private.assign_turn() from public, anon, authenticated, service_role;
revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;
revoke all on function memory_private.import_messages(jsonb, boolean) from public, anon, authenticated, service_role;
grant execute on function memory_private.import_messages(jsonb, boolean) to service_role;
revoke all on function memory_private.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings() to service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
comment on table memory_private.pending_embeddings is 'Messages waiting for a vector of the current embedding model, by user.';

-- The messages without a vector of the current model wait for one.
insert into memory_private.pending_embeddings (user_id, message_id)
select
    m.user_id,
    m.id
from memory.messages as m
where not exists (
    select 1
    from memory_private.message_embeddings as e
    where e.message_id = m.id and e.model = memory_private.setting('embedding_model') ->> 0
);

delete from memory_private.message_scans
where name = 'embeddings';
