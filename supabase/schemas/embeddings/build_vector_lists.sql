-- Drop a user's lists of a model, and of any model no longer current, with their copies; under
-- the user's vector lock, held alone until the transaction ends.
create function memory_private.drop_vector_lists(p_user_id uuid, p_model text)
returns void
language plpgsql
set search_path = ''
as $$
declare
    v_current text := memory_private.setting('embedding_model') ->> 0;
begin
    perform memory_private.vector_lists_lock(p_user_id, true);
    delete from memory_private.vector_list_entries as x
    where x.user_id = p_user_id and (x.model = p_model or x.model is distinct from v_current);
    delete from memory_private.vector_lists as l
    where l.user_id = p_user_id and (l.model = p_model or l.model is distinct from v_current);
end
$$;

revoke all on function memory_private.drop_vector_lists(uuid, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.drop_vector_lists(uuid, text) to service_role;

-- Build a user's vector lists for the current model (memory_private.vector_lists): ceil(sqrt(vectors))
-- centres by spherical k-means (the cosine's k-means: each centre the normalised mean of its
-- members) over a sample of 64 vectors a list, 6 rounds from centres drawn from the sample, a list
-- crowded past twice its share split in two (so somewhat more lists), then every vector copied
-- into the list of its nearest centre, list by list. The k-means runs before the user's vector
-- lock; the copy holds it alone, so no vector is stored meanwhile (memory_private.list_new_vectors
-- waits, then lists it by the new centres), and holds the user's vectors against deletion first,
-- so a delete waits for the build instead of crossing it. With fewer than vector_lists_from
-- vectors the user has no lists (the exact scan answers). While the user's vectors lag their
-- messages (a new model being embedded, an import), the build is due again in ten minutes;
-- otherwise when the fold finds the messages doubled. Returns the number of lists.
-- Cost: about vectors x lists distances (seconds at 60,000 vectors).
create function memory_private.build_vector_lists(p_user_id uuid, p_model text)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_messages bigint := coalesce(
        (select c.documents from memory_private.search_corpus as c where c.user_id = p_user_id), 0
    );
    v_vectors integer;
    v_lists integer;
    v_sample extensions.halfvec[];
    v_centroids extensions.halfvec[];
    v_crowded integer;
    v_splits integer;
    v_split integer;
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
    -- A list holding more than twice its share of the sample is split in two (at most as many
    -- splits as there were lists): a search reads its nearest lists whole, and the nearest tend to
    -- be the crowded ones, so uneven lists cost more rows than their mean. Its members go to the
    -- nearer of two seeds, the member farthest from its centre and the member farthest from that;
    -- members all alike (copies of one vector) are not split.
    v_crowded := 2 * cardinality(v_sample) / v_lists;
    v_splits := v_lists;
    for i in 1..6 loop
        -- A centre that drew no member keeps its place.
        with members as materialized (
            select (memory_private.nearest_centroids(v_centroids, s.v))[1] as n, s.v from unnest(v_sample) as s (v)
        ),
        means as (
            select m.n, count(*) as size, extensions.l2_normalize(extensions.avg(m.v)) as v
            from members as m
            group by m.n
        ),
        crowded as (
            -- The last round only moves the centres.
            select m.n, m.size from means as m where m.size > v_crowded and i < 6
        ),
        first_seeds as (
            select distinct on (m.n) m.n, m.v as a
            from members as m
            join crowded as c on c.n = m.n
            order by m.n, m.v operator(extensions.<=>) v_centroids[m.n] desc
        ),
        -- The lists that can be split, the most crowded first, as many as the splits left.
        seeds as (
            select s.n, s.a, s.b
            from (
                select distinct on (m.n) m.n, f.a, m.v as b, c.size
                from members as m
                join first_seeds as f on f.n = m.n
                join crowded as c on c.n = m.n
                order by m.n, m.v operator(extensions.<=>) f.a desc
            ) as s
            where (s.a operator(extensions.<=>) s.b) > 0
            order by s.size desc, s.n
            limit v_splits
        ),
        halves as (
            select m.n, (m.v operator(extensions.<=>) s.a) <= (m.v operator(extensions.<=>) s.b) as near_first,
                extensions.l2_normalize(extensions.avg(m.v)) as v
            from members as m
            join seeds as s on s.n = m.n
            group by 1, 2
        )
        select array_agg(x.v order by x.n, x.near_first desc), count(distinct x.n) filter (where x.split)
        into v_centroids, v_split
        from (
            select c.n, true as near_first, coalesce(m.v, c.v) as v, false as split
            from unnest(v_centroids) with ordinality as c (v, n)
            left join means as m on m.n = c.n
            where c.n not in (select h.n from halves as h)
            union all
            select h.n, h.near_first, h.v, true from halves as h
        ) as x;
        v_splits := v_splits - v_split;
    end loop;
    v_lists := cardinality(v_centroids);
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
$$;

revoke all on function memory_private.build_vector_lists(uuid, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.build_vector_lists(uuid, text) to service_role;

-- Why: pg_cron's minutely pass over the users due a build of their vector lists, oldest first,
-- each build committed on its own, for at most 50 seconds so one pass ends before the next. A
-- build that fails (logged as a warning) is tried again in an hour, behind the others. A procedure
-- that commits cannot carry a `set search_path` clause, so every name in it is schema-qualified.
create procedure memory_private.run_vector_list_builds()
language plpgsql
as $$
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
$$;

revoke all on procedure memory_private.run_vector_list_builds() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_vector_list_builds() to service_role;
