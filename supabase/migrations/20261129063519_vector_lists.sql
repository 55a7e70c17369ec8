-- Per-user vector lists (an inverted file): search by meaning over a long history reads the nearest
-- lists of the user's own vectors, built every minute by k-means off the write path.
create table memory_private.vector_list_entries (
    message_id bigint not null,
    user_id uuid not null,
    model text not null,
    list_no integer not null,
    embedding extensions.halfvec not null
);


alter table memory_private.vector_list_entries enable row level security;

create table memory_private.vector_lists (
    user_id uuid not null,
    model text not null,
    centroids extensions.halfvec[],
    lists integer,
    messages bigint,
    built_at timestamp with time zone,
    wanted_at timestamp with time zone
);


alter table memory_private.vector_lists enable row level security;

create index vector_list_entries_list_idx on memory_private.vector_list_entries using btree (user_id, model, list_no);

create unique index vector_list_entries_pkey on memory_private.vector_list_entries using btree (message_id);

create unique index vector_lists_pkey on memory_private.vector_lists using btree (user_id, model);

create index vector_lists_wanted_idx on memory_private.vector_lists using btree (wanted_at) where (
    wanted_at is not null
);

alter table memory_private.vector_list_entries
add constraint vector_list_entries_pkey primary key using index vector_list_entries_pkey;

alter table memory_private.vector_lists add constraint vector_lists_pkey primary key using index vector_lists_pkey;

alter table memory_private.vector_list_entries add constraint vector_list_entries_list_no_check check (
    (list_no > 0)
) not valid;

alter table memory_private.vector_list_entries validate constraint "vector_list_entries_list_no_check";

alter table memory_private.vector_list_entries add constraint vector_list_entries_message_id_fkey foreign key (
    message_id
) references memory_private.message_embeddings (message_id) on delete cascade not valid;

alter table memory_private.vector_list_entries validate constraint "vector_list_entries_message_id_fkey";

alter table memory_private.vector_lists add constraint vector_lists_built check (
    (((centroids is null) = (lists is null)) and ((messages is null) = (built_at is null)))
) not valid;

alter table memory_private.vector_lists validate constraint "vector_lists_built";

alter table memory_private.vector_lists add constraint vector_lists_lists_check check ((lists > 0)) not valid;

alter table memory_private.vector_lists validate constraint "vector_lists_lists_check";

alter table memory_private.vector_lists add constraint vector_lists_messages_check check (
    (messages >= 0)
) not valid;

alter table memory_private.vector_lists validate constraint "vector_lists_messages_check";

alter table memory_private.vector_lists add constraint vector_lists_user_id_fkey foreign key (
    user_id
) references memory.users (id) on delete cascade not valid;

alter table memory_private.vector_lists validate constraint "vector_lists_user_id_fkey";

set check_function_bodies = off;

create or replace function memory_private.build_vector_lists(p_user_id uuid, p_model text)
returns integer
language plpgsql
set search_path to ''
as $function$
declare
    v_messages bigint := coalesce(
        (select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0
    );
    v_vectors integer;
    v_lists integer;
    v_sample extensions.halfvec[];
    v_centroids extensions.halfvec[];
begin
    -- Lists of a model no longer current are no use to anybody.
    if p_model is distinct from memory_private.setting('embedding_model') ->> 0 then
        perform memory_private.drop_vector_lists(p_user_id, p_model);
        return 0;
    end if;
    select count(*) into v_vectors
    from memory_private.message_embeddings as e
    where e.user_id = p_user_id and e.model = p_model and e.embedding is not null;
    v_lists := ceil(sqrt(v_vectors));
    -- A vector of zeros has no direction: no centre is drawn from one.
    v_sample := array(
        select e.embedding
        from memory_private.message_embeddings as e
        where e.user_id = p_user_id and e.model = p_model and e.embedding is not null
            and extensions.l2_norm(e.embedding) > 0
        order by random()
        limit 64 * v_lists
    );
    v_lists := least(v_lists, cardinality(v_sample));
    if v_vectors < memory_private.number_setting('vector_lists_from', 1) or v_lists = 0 then
        perform memory_private.drop_vector_lists(p_user_id, p_model);
        -- Kept without lists: the fold marks it due again when the messages double.
        insert into memory_private.vector_lists (user_id, model, messages, built_at, wanted_at)
        values (
            p_user_id, p_model, v_messages, now(),
            case when v_messages >= memory_private.number_setting('vector_lists_from', 1)
                then now() + interval '10 minutes' end
        );
        return 0;
    end if;
    v_centroids := v_sample[1:v_lists];
    for i in 1..6 loop
        -- A centre that drew no member keeps its place.
        with members as (
            select memory_private.nearest_centroid(v_centroids, s.v) as n, s.v from unnest(v_sample) as s (v)
        ),
        means as (
            select m.n, extensions.l2_normalize(extensions.avg(m.v)) as v from members as m group by m.n
        )
        select array_agg(coalesce(m.v, c.v) order by c.n)
        into v_centroids
        from unnest(v_centroids) with ordinality as c (v, n)
        left join means as m on m.n = c.n;
    end loop;
    perform memory_private.vector_lists_lock(p_user_id, true);
    -- Every vector held against deletion before a copy is replaced: a delete that comes later waits
    -- here at the vector, never at a copy this build replaced while the build waits for it (the
    -- new copy's foreign key), which deadlocked.
    perform from memory_private.message_embeddings as e
    where e.user_id = p_user_id and e.model = p_model and e.embedding is not null
    for key share;
    perform memory_private.drop_vector_lists(p_user_id, p_model);
    insert into memory_private.vector_lists (user_id, model, centroids, lists, messages, built_at, wanted_at)
    values (
        p_user_id, p_model, v_centroids, v_lists, v_messages, now(),
        case when v_vectors < v_messages / 2 then now() + interval '10 minutes' end
    );
    insert into memory_private.vector_list_entries (message_id, user_id, model, list_no, embedding)
    select a.message_id, p_user_id, p_model, a.n, a.embedding
    from (
        select e.message_id, e.embedding, memory_private.nearest_centroid(v_centroids, e.embedding) as n
        from memory_private.message_embeddings as e
        where e.user_id = p_user_id and e.model = p_model and e.embedding is not null
    ) as a
    order by a.n, a.message_id;
    return v_lists;
end
$function$;

create or replace function memory_private.drop_vector_lists(p_user_id uuid, p_model text)
returns void
language plpgsql
set search_path to ''
as $function$
declare
    v_current text := memory_private.setting('embedding_model') ->> 0;
begin
    perform memory_private.vector_lists_lock(p_user_id, true);
    delete from memory_private.vector_list_entries as x
    where x.user_id = p_user_id and (x.model = p_model or x.model is distinct from v_current);
    delete from memory_private.vector_lists as l
    where l.user_id = p_user_id and (l.model = p_model or l.model is distinct from v_current);
end
$function$;

create or replace function memory_private.list_new_vectors()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    perform memory_private.vector_lists_lock(u.user_id, false)
    from (select distinct n.user_id from changed as n order by n.user_id) as u;
    delete from memory_private.vector_list_entries as x
    where x.message_id in (select n.message_id from changed as n);
    insert into memory_private.vector_list_entries (message_id, user_id, model, list_no, embedding)
    select n.message_id, n.user_id, n.model, memory_private.nearest_centroid(l.centroids, n.embedding), n.embedding
    from changed as n
    join memory_private.vector_lists as l on l.user_id = n.user_id and l.model = n.model
    where n.embedding is not null and l.centroids is not null;
    perform memory_private.note_vector_lists_due(array(select distinct n.user_id from changed as n));
    return null;
end
$function$;

create or replace function memory_private.nearest_centroid(
    p_centroids extensions.halfvec[], p_vector extensions.halfvec
)
returns integer
language plpgsql
immutable parallel safe
set search_path to ''
as $function$
begin
    return (
        select c.n::integer
        from unnest(p_centroids) with ordinality as c (centroid, n)
        order by c.centroid operator(extensions.<=>) p_vector, c.n
        limit 1
    );
end
$function$;

create or replace function memory_private.note_vector_lists_due(p_users uuid[])
returns void
language plpgsql
set search_path to ''
as $function$
declare
    v_model text := memory_private.setting('embedding_model') ->> 0;
begin
    insert into memory_private.vector_lists as l (user_id, model, wanted_at)
    select c.user_id, v_model, now()
    from memory_private.search_corpus as c
    left join memory_private.vector_lists as l on l.user_id = c.user_id and l.model = v_model
    where c.user_id = any(p_users)
        and c.documents >= memory_private.number_setting('vector_lists_from', 1)
        and (l.user_id is null or l.wanted_at is null and (l.messages is null or c.documents >= 2 * l.messages))
        and exists (
            select 1 from memory_private.message_embeddings as e where e.user_id = c.user_id and e.model = v_model
        )
    on conflict (user_id, model) do update set wanted_at = excluded.wanted_at;
end
$function$;

create or replace procedure memory_private.run_vector_list_builds()
language plpgsql
as $procedure$
declare
    v_until timestamptz := clock_timestamp() + interval '50 seconds';
    v_due record;
begin
    loop
        select l.user_id, l.model into v_due
        from memory_private.vector_lists as l
        where l.wanted_at <= now()
        order by l.wanted_at
        limit 1;
        exit when not found;
        begin
            perform memory_private.build_vector_lists(v_due.user_id, v_due.model);
        exception when others then
            raise warning 'supamem: vector lists of user % not built: %', v_due.user_id, sqlerrm;
            update memory_private.vector_lists as l set wanted_at = now() + interval '1 hour'
            where l.user_id = v_due.user_id and l.model = v_due.model;
        end;
        commit;
        exit when clock_timestamp() > v_until;
    end loop;
end
$procedure$;

create or replace function memory_private.vector_lists_lock(p_user_id uuid, p_exclusive boolean)
returns void
language plpgsql
set search_path to ''
as $function$
declare
    v_key bigint := pg_catalog.hashtextextended('supamem.vector_lists/' || p_user_id::text, 0);
begin
    if p_exclusive then
        perform pg_catalog.pg_advisory_xact_lock(v_key);
    else
        perform pg_catalog.pg_advisory_xact_lock_shared(v_key);
    end if;
end
$function$;

create or replace function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path to ''
as $function$
begin
    if p_model is null or p_model !~ '^[[:print:]]{1,200}$' then
        raise exception using errcode = '22023', message = 'model must be 1..200 printable characters';
    end if;
    -- HNSW indexes vectors of half precision up to 4,000 dimensions (text-embedding-3-large has 3,072).
    if p_dimensions is null or p_dimensions < 1 or p_dimensions > 4000 then
        raise exception using errcode = '22023', message = 'dimensions must be 1..4000 (the HNSW limit)';
    end if;
    if memory_private.setting('embedding_model') ->> 0 = p_model
        and (memory_private.setting('embedding_dimensions'))::integer = p_dimensions then
        return;
    end if;
    perform memory_private.ensure_embedding_indexes(p_model, p_dimensions);
    -- Users with vector lists are due lists of the new model (built once its vectors are there);
    -- lists of a model name used again were made from vectors of other dimensions.
    delete from memory_private.vector_list_entries as x
    where exists (select 1 from memory_private.vector_lists as l where l.model = p_model) and x.model = p_model;
    delete from memory_private.vector_lists as l where l.model = p_model;
    insert into memory_private.vector_lists (user_id, model, wanted_at)
    select distinct l.user_id, p_model, now() from memory_private.vector_lists as l;
    update memory_private.settings set value = to_jsonb(p_model) where key = 'embedding_model';
    update memory_private.settings set value = to_jsonb(p_dimensions) where key = 'embedding_dimensions';
    -- The scan starts with the newest messages; the embed scan queues their users.
    perform memory_private.note_for_new_model(p_restart => true);
    perform memory_private.queue_embeddings();
    perform memory_private.queue_embed(u.id)
    from memory.users as u
    where exists (select 1 from memory.memories as mm where mm.user_id = u.id)
        and not exists (select 1 from memory.messages as m where m.user_id = u.id);
end
$function$;

create or replace function memory_private.fold_search_terms(
    p_batch integer default 100000, p_wait interval default '00:00:01'::interval
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_from bigint;
    v_to bigint;
    v_edited bigint[];
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    -- Notes of messages a fold has passed: their words were counted (notes of messages not passed
    -- yet wait for the fold that passes them).
    with gone as (
        delete from memory_private.search_unfolds as g where g.message_id <= v_from
        returning g.user_id, g.message_id, g.search
    ),
    sizes as (
        update memory_private.search_corpus as c
        set documents = greatest(0, c.documents - g.documents), lexemes = greatest(0, c.lexemes - g.lexemes)
        from (
            select x.user_id, count(*) as documents, sum(length(x.search)) as lexemes from gone as x group by x.user_id
        ) as g
        where c.user_id = g.user_id
    ),
    -- Each posting's whole key first, so each is deleted by one probe (joined to the notes alone,
    -- a plan read the user's postings once for every note).
    gone_postings as materialized (
        select x.user_id, w.lexeme, x.message_id
        from gone as x
        cross join lateral unnest(tsvector_to_array(x.search)) as w (lexeme)
    ),
    postings as (
        delete from memory_private.search_postings as p
        using gone_postings as g
        where p.user_id = g.user_id and p.lexeme = g.lexeme and p.message_id = g.message_id
    ),
    terms as (
        update memory_private.search_terms as s
        set documents = greatest(0, s.documents - g.documents)
        from (
            select x.user_id, x.lexeme, count(*)::integer as documents
            from gone_postings as x
            group by x.user_id, x.lexeme
        ) as g
        where s.user_id = g.user_id and s.lexeme = g.lexeme
    )
    -- An edited message is still there: its words now are counted below.
    select array_agg(x.message_id) from gone as x
    where exists (select 1 from memory.messages as m where m.id = x.message_id)
    into v_edited;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is not null and not memory_private.await_message_writers(p_wait) then
        v_to := null;
    end if;
    if v_to is null and v_edited is null then
        return 0;
    end if;
    -- Read after the wait: every message up to v_to has committed or never will.
    with batch as materialized (
        select m.id, m.user_id, m.search from memory.messages as m where m.id > v_from and m.id <= v_to
        union all
        select m.id, m.user_id, m.search from memory.messages as m where m.id = any(v_edited)
    ),
    postings as (
        insert into memory_private.search_postings (user_id, lexeme, message_id, frequency, length)
        select b.user_id, w.lexeme, b.id, cardinality(w.positions), length(b.search)
        from batch as b
        cross join lateral unnest(b.search) as w (lexeme, positions, weights)
        -- In the index's order: a term's new postings go to the same leaf pages.
        order by b.user_id, w.lexeme, b.id
    ),
    sizes as (
        insert into memory_private.search_corpus as c (user_id, documents, lexemes)
        select b.user_id, count(*), sum(length(b.search)) from batch as b group by b.user_id
        on conflict (user_id) do update
        set documents = c.documents + excluded.documents, lexemes = c.lexemes + excluded.lexemes
    ),
    -- The notes this fold's range already holds (writers that committed before the batch was
    -- read): a message the batch does not hold was never counted; one it holds was counted with
    -- the batch's words. Notes committed later hold the words the batch read.
    uncounted as (
        delete from memory_private.search_unfolds as g
        where g.message_id > v_from and g.message_id <= v_to
            and not exists (select 1 from batch as b where b.id = g.message_id)
    ),
    counted as (
        update memory_private.search_unfolds as g set search = b.search
        from batch as b
        where g.message_id = b.id and g.message_id > v_from and g.message_id <= v_to
            and g.search is distinct from b.search
    )
    insert into memory_private.search_terms as s (user_id, lexeme, documents)
    select b.user_id, w.lexeme, count(*)
    from batch as b
    cross join lateral unnest(tsvector_to_array(b.search)) as w (lexeme)
    group by b.user_id, w.lexeme
    on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents;
    if v_to is null then
        return 0;
    end if;
    perform memory_private.note_vector_lists_due(
        array(select distinct m.user_id from memory.messages as m where m.id > v_from and m.id <= v_to)
    );
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
end
$function$;

create or replace function memory_private.vector_messages(
    p_user_id uuid, p_embedding extensions.vector, p_conversation_id uuid default null::uuid, p_limit integer default 50
)
returns table (message_id bigint, distance double precision)
language plpgsql
stable rows 50
set search_path to ''
set enable_seqscan to 'off'
set "hnsw.iterative_scan" to 'relaxed_order'
as $function$
declare
    v_dimensions integer := memory_private.check_query_embedding(p_embedding);
    v_model text;
    v_mine double precision;
    v_all double precision;
    v_ids bigint[];
    v_distances double precision[];
    v_cost double precision;
    v_probes integer;
    v_lists integer;
    -- The vectors are stored in half precision (half the bytes an exact scan reads).
    v_query extensions.halfvec := p_embedding::extensions.halfvec;
begin
    if p_embedding is null then
        return;
    end if;
    v_model := memory_private.setting('embedding_model') ->> 0;
    if p_conversation_id is not null then
        -- One conversation: exact, over its messages; a static statement keeps its plan.
        -- A vector of zeros has no direction (its cosine distance is NaN, which sorts last) and a row
        -- the server refused has none (null, sorted after): neither is anybody's neighbour, and a NaN
        -- would make every fused score NaN.
        return query
        select n.message_id, n.distance
        from (
            select e.message_id, (e.embedding operator(extensions.<=>) v_query)::double precision as distance
            from memory.messages as m
            join memory_private.message_embeddings as e on e.message_id = m.id
            where m.conversation_id = p_conversation_id and m.user_id = p_user_id and e.model = v_model
            order by 2, 1
            limit p_limit
        ) as n
        where n.distance <> 'NaN'::double precision;
        return;
    end if;
    -- Only a search over the user's history chooses a scan.
    v_cost := memory_private.number_setting('hnsw_visit_cost', 0);
    v_probes := memory_private.number_setting('vector_list_probes', 1);
    v_mine := coalesce((select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0);
    v_all := greatest(
        v_mine,
        (select c.reltuples from pg_catalog.pg_class as c where c.oid = 'memory_private.message_embeddings'::regclass)
    );
    v_lists := (select l.lists from memory_private.vector_lists as l where l.user_id = p_user_id and l.model = v_model);
    if v_lists + v_probes * v_mine / v_lists < least(v_mine, p_limit * v_all * v_cost / greatest(v_mine, 1)) then
        -- The nearest lists' vectors, each list read together by one probe of the list index (as
        -- `list_no = any(...)` a generic plan read every vector of the user and filtered them).
        select array_agg(n.message_id order by n.distance, n.message_id),
            array_agg(n.distance order by n.distance, n.message_id)
        into v_ids, v_distances
        from (
            select x.message_id, (x.embedding operator(extensions.<=>) v_query)::double precision as distance
            from (
                select c.n::integer as list_no
                from memory_private.vector_lists as l
                cross join lateral unnest(l.centroids) with ordinality as c (centroid, n)
                where l.user_id = p_user_id and l.model = v_model
                order by c.centroid operator(extensions.<=>) v_query, c.n
                limit v_probes
            ) as p
            cross join lateral (
                select e.message_id, e.embedding
                from memory_private.vector_list_entries as e
                where e.user_id = p_user_id and e.model = v_model and e.list_no = p.list_no
                -- Kept apart from the join, so each list is one index probe.
                offset 0
            ) as x
            order by 2, 1
            limit p_limit
        ) as n
        where n.distance <> 'NaN'::double precision;
        if cardinality(v_ids) >= p_limit then
            return query select x.id, x.distance from unnest(v_ids, v_distances) as x (id, distance);
            return;
        end if;
    elsif v_mine * v_mine > p_limit * v_all * v_cost then
        -- The model's partial HNSW index; relaxed order, so the nearest are sorted again.
        execute format(
            'with nearest as materialized (
                select e.message_id,
                    (e.embedding::extensions.halfvec(%1$s) operator(extensions.<=>) $1)::double precision as distance
                from memory_private.message_embeddings as e
                where e.user_id = $2 and e.model = %2$L
                order by e.embedding::extensions.halfvec(%1$s) operator(extensions.<=>) $1
                limit $3
            )
            select array_agg(n.message_id order by n.distance, n.message_id),
                array_agg(n.distance order by n.distance, n.message_id)
            from nearest as n',
            v_dimensions, v_model
        ) into v_ids, v_distances using v_query, p_user_id, p_limit;
        if cardinality(v_ids) >= p_limit then
            return query select x.id, x.distance from unnest(v_ids, v_distances) as x (id, distance);
            return;
        end if;
    end if;
    -- Exact over the user's vectors of the model, through (user_id, model); without a vector of
    -- zeros or a refusal, as above (the HNSW index holds neither).
    return query
    select n.message_id, n.distance
    from (
        select e.message_id, (e.embedding operator(extensions.<=>) v_query)::double precision as distance
        from memory_private.message_embeddings as e
        where e.user_id = p_user_id and e.model = v_model
        order by 2, 1
        limit p_limit
    ) as n
    where n.distance <> 'NaN'::double precision;
end
$function$;

grant select on table memory_private.vector_list_entries to authenticated;

grant delete on table memory_private.vector_list_entries to service_role;

grant insert on table memory_private.vector_list_entries to service_role;

grant select on table memory_private.vector_list_entries to service_role;

grant update on table memory_private.vector_list_entries to service_role;

grant select on table memory_private.vector_lists to authenticated;

grant delete on table memory_private.vector_lists to service_role;

grant insert on table memory_private.vector_lists to service_role;

grant select on table memory_private.vector_lists to service_role;

grant update on table memory_private.vector_lists to service_role;

create policy "Users read the listed vectors of their own messages"
on memory_private.vector_list_entries
as permissive
for select
to authenticated
using ((user_id = (select auth.uid() as uid)));


create policy "Users read their own vector lists"
on memory_private.vector_lists
as permissive
for select
to authenticated
using ((user_id = (select auth.uid() as uid)));


create trigger message_embeddings_listed_on_insert
after insert on memory_private.message_embeddings
referencing new table as changed
for each statement execute function memory_private.list_new_vectors();

create trigger message_embeddings_listed_on_update
after update on memory_private.message_embeddings
referencing new table as changed
for each statement execute function memory_private.list_new_vectors();


revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
revoke all on function memory_private.build_vector_lists(uuid, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.build_vector_lists(uuid, text) to service_role;
revoke all on function memory_private.drop_vector_lists(uuid, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.drop_vector_lists(uuid, text) to service_role;
revoke all on function memory_private.fold_search_terms(integer, interval)
from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer, interval) to service_role;
revoke all on function memory_private.list_new_vectors() from public, anon, authenticated, service_role;
revoke all on function memory_private.nearest_centroid(extensions.halfvec[], extensions.halfvec)
from public, anon, authenticated, service_role;
grant execute on function memory_private.nearest_centroid(extensions.halfvec[], extensions.halfvec) to service_role;
revoke all on function memory_private.note_vector_lists_due(uuid[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.note_vector_lists_due(uuid[]) to service_role;
revoke all on procedure memory_private.run_vector_list_builds() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_vector_list_builds() to service_role;
revoke all on function memory_private.vector_lists_lock(uuid, boolean) from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_lists_lock(uuid, boolean) to service_role;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
comment on table memory_private.vector_list_entries is
'The vectors of users with vector lists, each in the list of its nearest centre, a list''s rows written together.';
comment on table memory_private.vector_lists is
'Per user and embedding model: the centres of the user''s vector lists (an inverted file), and whether a build is due.';

insert into memory_private.settings (key, value, description) values
(
    'vector_lists_from', '2000',
    'Messages from which a user''s vectors get lists of their own (an inverted file, built every minute by '
    'memory_private.run_vector_list_builds and again when the messages double): search by meaning then reads '
    'the nearest lists instead of every vector of the user.'
),
(
    'vector_list_probes', '8',
    'Lists of a user''s vectors that search by meaning reads (the nearest centres): more finds more of the '
    'exact nearest, at about sqrt(the user''s vectors) distances a list.'
);

-- Users already past the size, with vectors of the model, are due their lists.
insert into memory_private.vector_lists (user_id, model, wanted_at)
select
    c.user_id,
    memory_private.setting('embedding_model') ->> 0 as model,
    now() as wanted_at
from memory_private.search_corpus as c
where c.documents >= memory_private.number_setting('vector_lists_from', 1) and exists (
    select 1 from memory_private.message_embeddings as e
    where e.user_id = c.user_id and e.model = memory_private.setting('embedding_model') ->> 0
);

insert into memory_private.schedules (name, schedule, command) values
('supamem-build-vector-lists', '* * * * *', 'call memory_private.run_vector_list_builds()');
select memory_private.schedule_jobs();
