-- The embeddings, hybrid search, term statistics and first-profile migrations as they now stand
-- (20261125010000 to 010400, unchanged since they landed): new messages ask for embedding through a
-- scan (memory.queue_embeddings, pg_cron every minute and workers before each claim) instead of a
-- trigger on every insert, and embed jobs are queued through memory_private.enqueue; background
-- scans of new messages keep their positions in one table (memory_private.message_scans) with one
-- next-batch function; a memory that only the vector side finds must reach
-- memory_search_min_similarity to match a search; and a memory of a user without profiles makes
-- the first primary profile in a small trigger before memory_defaults, which is back as it was.

drop trigger if exists messages_embedding_wanted on memory.messages;

create table memory_private.message_scans (
    name text not null,
    through bigint not null default 0
);


alter table memory_private.message_scans enable row level security;

create unique index message_scans_pkey on memory_private.message_scans using btree (name);

alter table memory_private.message_scans add constraint message_scans_pkey primary key using index message_scans_pkey;

-- The term statistics' fold position moves to the shared table of scan positions as it stands, so
-- no message is counted twice; the embedding scan starts from the first message, so a history
-- written before it is queued once for embedding too.
insert into memory_private.message_scans (name, through)
select
    'search_terms' as name,
    f.through
from memory_private.search_terms_folded as f;
insert into memory_private.message_scans (name) values ('embeddings');

drop policy "Everyone signed in reads how far the statistics go" on memory_private.search_terms_folded;

revoke select on table memory_private.search_terms_folded from authenticated;

revoke select on table memory_private.search_terms_folded from service_role;

alter table memory_private.search_terms_folded drop constraint "search_terms_folded_id_check";

alter table memory_private.search_terms_folded drop constraint "search_terms_folded_pkey";

drop index if exists memory_private.search_terms_folded_pkey;

drop table memory_private.search_terms_folded;


set check_function_bodies = off;

create or replace function memory.queue_embeddings()
returns integer
language sql
set search_path to ''
as $function$
    select memory_private.queue_embeddings()
$function$;

create or replace function memory_private.first_profile()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if new.profile_id is null
        and ((select auth.uid()) is null or new.user_id = (select auth.uid()))
        and not exists (select 1 from memory.profiles as p where p.user_id = new.user_id) then
        insert into memory.profiles (user_id, tenant_id, is_primary)
        select u.id, u.tenant_id, true from memory.users as u where u.id = new.user_id
        on conflict (user_id) where is_primary do nothing;
    end if;
    return new;
end
$function$;

create or replace function memory_private.next_messages(p_from bigint, p_batch integer)
returns bigint
language sql
stable
set search_path to ''
as $function$
    select max(n.id) from (select m.id from memory.messages as m where m.id > p_from order by m.id limit p_batch) as n
$function$;

create or replace function memory_private.queue_embeddings(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_from bigint;
    v_to bigint;
    v_user uuid;
    v_users integer := 0;
begin
    select q.through into v_from from memory_private.message_scans as q where q.name = 'embeddings'
    for update skip locked;
    if not found then
        return 0;
    end if;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is null then
        return 0;
    end if;
    for v_user in
        select distinct m.user_id from memory.messages as m where m.id > v_from and m.id <= v_to
    loop
        perform memory_private.enqueue('embed', '{}', 'embed:' || v_user, v_user, null, true);
        v_users := v_users + 1;
    end loop;
    update memory_private.message_scans set through = v_to where name = 'embeddings';
    return v_users;
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
    end if;
    -- Rows committed before this check are seen; a later one waits for the user's next job.
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('stored', v_stored, 'model', p_model));
    if exists (select 1 from memory_private.unembedded(v_job.user_id, 1)) then
        perform memory_private.enqueue('embed', '{}', 'embed:' || v_job.user_id, v_job.user_id, null, true);
    end if;
    return jsonb_build_object('stored', v_stored, 'current_model', v_current);
end
$function$;

create or replace function memory.search_memories(
    p_query text default null::text,
    p_user_id uuid default null::uuid,
    p_type text default null::text,
    p_category text default null::text,
    p_profile_id uuid default null::uuid,
    p_conversation_id uuid default null::uuid,
    p_created_from timestamp with time zone default null::timestamp with time zone,
    p_created_to timestamp with time zone default null::timestamp with time zone,
    p_status text default 'active'::text,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.memories
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
    -- The vector side only ranks a text query.
    v_embedding extensions.vector := case when p_query is not null then p_query_embedding end;
begin
    if p_status is null or p_status not in ('active', 'archived', 'deleted', 'superseded', 'all') then
        raise exception using errcode = '22023', message = format('unknown status %L', p_status),
            hint = 'status is one of active, archived, deleted, superseded, all';
    end if;
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 100000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..100000';
    end if;
    if length(p_query) > 1000 then
        raise exception using errcode = '22023', message = 'a memory search is at most 1,000 characters';
    end if;
    return query
    with lexical as (
        select l.memory_id, rank() over (order by l.score desc) as rank
        from memory_private.lexical_memories(v_user, p_query, 1000) as l
    ),
    semantic as (
        select n.memory_id, rank() over (order by n.distance) as rank, 1 - n.distance as similarity
        from memory_private.vector_memories(v_user, v_embedding, 100) as n
    ),
    fused as (
        -- A search filters: a memory that only the vector side finds must be similar enough.
        select coalesce(l.memory_id, s.memory_id) as memory_id,
            coalesce(s.similarity >= (memory_private.setting('memory_search_min_similarity'))::double precision, false)
            as near,
            coalesce(1.0 / (60 + l.rank), 0) + coalesce(1.0 / (60 + s.rank), 0) as score
        from lexical as l
        full join semantic as s on s.memory_id = l.memory_id
    )
    select m.*
    from memory.memories as m
    left join fused as r on r.memory_id = m.id
    where m.user_id = v_user
        and (
            p_query is null or m.search @@ v_query or extensions.word_similarity(p_query, m.content) >= 0.4
            or r.near
        )
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
        r.score desc nulls last,
        case when p_query is not null then extensions.word_similarity(p_query, m.content) else 0 end desc,
        m.created_at desc,
        m.id
    limit p_limit offset p_offset;
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
    for v_user in select u.id from memory.users as u loop
        perform memory_private.enqueue('embed', '{}', 'embed:' || v_user, v_user, null, true);
    end loop;
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
            delete from memory_private.message_embeddings as e where e.message_id = new.id;
        else
            delete from memory_private.memory_embeddings as e where e.memory_id = new.id;
        end if;
    end if;
    perform memory_private.enqueue('embed', '{}', 'embed:' || new.user_id, new.user_id, null, true);
    return null;
end
$function$;

create or replace function memory_private.fold_search_terms(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_from bigint;
    v_to bigint;
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is null then
        return 0;
    end if;
    insert into memory_private.search_terms as s (user_id, lexeme, documents)
    select m.user_id, w.lexeme, count(*)
    from memory.messages as m
    cross join lateral unnest(tsvector_to_array(m.search)) as w (lexeme)
    where m.id > v_from and m.id <= v_to
    group by m.user_id, w.lexeme
    on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents;
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
end
$function$;

create or replace function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null::uuid, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_documents double precision;
    v_average double precision;
    v_folded bigint := (select f.through from memory_private.message_scans as f where f.name = 'search_terms');
    v_frequencies jsonb;
    v_rarest text[];
begin
    if cardinality(v_terms) = 0 then
        return;
    end if;
    select greatest(c.documents, 1), c.lexemes::double precision / greatest(c.documents, 1)
    into v_documents, v_average
    from memory_private.search_corpus as c where c.user_id = p_user_id;
    if not found then
        return;
    end if;
    -- Each term's frequency: the folded count plus the user's messages not folded yet.
    select
        jsonb_object_agg(f.term, f.df),
        array_agg(f.term order by f.df, f.term) filter (where f.running <= 2000 or f.position = 1)
    into v_frequencies, v_rarest
    from (
        select d.term, d.df, sum(d.df) over w as running, row_number() over w as position
        from (
            select t.term, coalesce(s.documents, 0) + (
                select count(*) from (
                    select 1 from memory.messages as m
                    where m.user_id = p_user_id and m.id > v_folded and m.search @@ quote_literal(t.term)::tsquery
                    limit 20000
                ) as u
            ) as df
            from unnest(v_terms) as t (term)
            left join memory_private.search_terms as s on s.user_id = p_user_id and s.lexeme = t.term
        ) as d
        window w as (order by d.df, d.term)
    ) as f;
    return query
    with matches as (
        select m.id, m.search
        from memory.messages as m
        where m.user_id = p_user_id and m.search @@ memory_private.any_term(v_rarest)
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
        order by m.id desc
        limit 2000
    )
    select x.id, sum(memory_private.bm25(
        cardinality(w.positions), length(x.search), v_average,
        greatest((v_frequencies ->> w.lexeme)::double precision, 1), v_documents
    ))
    from matches as x
    cross join lateral unnest(x.search) as w (lexeme, positions, weights)
    where v_frequencies ? w.lexeme
    group by x.id
    order by 2 desc, x.id
    limit p_limit;
end
$function$;

create or replace function memory_private.memory_defaults()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_reason text;
    v_message memory.messages;
begin
    -- Another user's row is RLS's to refuse (42501); resolve nothing for it here. Cascades
    -- (an owner deleting a together conversation) run as postgres with the caller's claims.
    if (select auth.uid()) is not null and new.user_id is distinct from (select auth.uid()) then
        return new;
    end if;
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if new.source_message_id is not null
        and (tg_op = 'INSERT' or new.source_message_id is distinct from old.source_message_id) then
        v_reason := memory_private.memory_gate(new.user_id, new.source_message_id);
        if v_reason is not null then
            raise exception using errcode = '42501', message = 'memory not allowed: ' || v_reason;
        end if;
        select m.* into v_message from memory.messages as m where m.id = new.source_message_id;
        new.source_conversation_id := v_message.conversation_id;
        new.turn_index := v_message.turn_number;
        new.origin_mode := (select c.mode from memory.conversations as c where c.id = v_message.conversation_id);
    end if;
    new.profile_id := memory_private.memory_profile(new.user_id, new.source_message_id, new.profile_id);
    if new.profile_id is null then
        raise exception using errcode = '23502', message = 'memory needs a profile',
            hint = 'Create a primary profile for the user, or pass one.';
    end if;
    return new;
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text)
language sql
stable
set search_path to ''
as $function$
    (
        select 'message', m.id::text, m.content
        from memory.messages as m
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
    limit p_limit
$function$;

create or replace function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    update memory_private.search_terms as s
    set documents = greatest(0, s.documents - g.documents)
    from (
        select o.user_id, w.lexeme, count(*)::integer as documents
        from old_messages as o
        cross join lateral unnest(tsvector_to_array(o.search)) as w (lexeme)
        where o.id <= (select f.through from memory_private.message_scans as f where f.name = 'search_terms')
        group by o.user_id, w.lexeme
    ) as g
    where s.user_id = g.user_id and s.lexeme = g.lexeme;
    return null;
end
$function$;

grant select on table memory_private.message_scans to authenticated;

grant select on table memory_private.message_scans to service_role;

create policy "Signed-in users read how far the term statistics go"
on memory_private.message_scans
as permissive
for select
to authenticated
using ((name = 'search_terms'::text));


create trigger memories_before_defaults_first_profile
before insert on memory.memories
for each row execute function memory_private.first_profile();

create trigger messages_embedding_wanted
after update of content on memory.messages
for each row execute function memory_private.embedding_wanted();


revoke all on function memory.finish_embeddings(bigint, text, text, jsonb) from public,
anon,
authenticated,
service_role;
grant execute on function memory.finish_embeddings(bigint, text, text, jsonb) to service_role;
revoke all on function memory.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory.queue_embeddings() to service_role;
revoke all on function memory.search_memories(
    text,
    uuid,
    text,
    text,
    uuid,
    uuid,
    timestamp with time zone,
    timestamp with time zone,
    text,
    integer,
    integer,
    extensions.vector
)
from public, anon, authenticated, service_role;
grant execute on function memory.search_memories(
    text,
    uuid,
    text,
    text,
    uuid,
    uuid,
    timestamp with time zone,
    timestamp with time zone,
    text,
    integer,
    integer,
    extensions.vector
)
to authenticated, service_role;
revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;
revoke all on function memory_private.first_profile() from public, anon, authenticated, service_role;
revoke all on function memory_private.fold_search_terms(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer) to service_role;
revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
revoke all on function memory_private.memory_defaults() from public, anon, authenticated, service_role;
revoke all on function memory_private.next_messages(bigint, integer) from public, anon, authenticated, service_role;
revoke all on function memory_private.queue_embeddings(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings(integer) to service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;
comment on table memory_private.message_scans is 'How far (by message id) each background scan of new messages has read.';

-- The embed jobs are queued through memory_private.enqueue now (its dedup key per user).
drop function memory_private.enqueue_embedding(uuid);

insert into memory_private.settings (key, value, description) values (
    'memory_search_min_similarity', '0.5',
    'Cosine similarity a memory needs to match a search by meaning alone (search_memories).'
);

insert into memory_private.schedules (name, schedule, command) values
('supamem-queue-embeddings', '* * * * *', 'select memory_private.queue_embeddings()');
select memory_private.schedule_jobs();
