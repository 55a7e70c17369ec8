-- One function finds the nearest centres, for where a vector is listed and for which lists a search
-- reads (the search ranked the centres with a copy of its statement).
-- pgvector's settings (hnsw.iterative_scan, set by vector_messages) exist once its library is loaded.
select extensions.vector_dims('[1]'::extensions.vector) as loaded;
drop function if exists memory_private.nearest_centroid(
    p_centroids extensions.halfvec[], p_vector extensions.halfvec
);

set check_function_bodies = off;

create or replace function memory_private.nearest_centroids(
    p_centroids extensions.halfvec[], p_vector extensions.halfvec, p_count integer default 1
)
returns integer[]
language plpgsql
immutable parallel safe
set search_path to ''
as $function$
begin
    return array(
        select c.n::integer
        from unnest(p_centroids) with ordinality as c (centroid, n)
        order by c.centroid operator(extensions.<=>) p_vector, c.n
        limit p_count
    );
end
$function$;

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
            select (memory_private.nearest_centroids(v_centroids, s.v))[1] as n, s.v from unnest(v_sample) as s (v)
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
        select e.message_id, e.embedding, (memory_private.nearest_centroids(v_centroids, e.embedding))[1] as n
        from memory_private.message_embeddings as e
        where e.user_id = p_user_id and e.model = p_model and e.embedding is not null
    ) as a
    order by a.n, a.message_id;
    return v_lists;
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
    select
        n.message_id, n.user_id, n.model, (memory_private.nearest_centroids(l.centroids, n.embedding))[1], n.embedding
    from changed as n
    join memory_private.vector_lists as l on l.user_id = n.user_id and l.model = n.model
    where n.embedding is not null and l.centroids is not null;
    perform memory_private.note_vector_lists_due(array(select distinct n.user_id from changed as n));
    return null;
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
            from memory_private.vector_lists as l
            cross join lateral unnest(memory_private.nearest_centroids(l.centroids, v_query, v_probes)) as p (list_no)
            cross join lateral (
                select e.message_id, e.embedding
                from memory_private.vector_list_entries as e
                where e.user_id = p_user_id and e.model = v_model and e.list_no = p.list_no
                -- Kept apart from the join, so each list is one index probe.
                offset 0
            ) as x
            where l.user_id = p_user_id and l.model = v_model
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


revoke all on function memory_private.build_vector_lists(uuid, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.build_vector_lists(uuid, text) to service_role;
revoke all on function memory_private.list_new_vectors() from public, anon, authenticated, service_role;
revoke all on function memory_private.nearest_centroids(extensions.halfvec[], extensions.halfvec, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.nearest_centroids(extensions.halfvec[], extensions.halfvec, integer)
to authenticated, service_role;
revoke all on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_messages(uuid, extensions.vector, uuid, integer)
to authenticated, service_role;
