-- Why: search by meaning over a long history, at a cost that follows the page rather than the
-- history or the user's share of everyone's vectors. The exact scan reads every vector of the
-- user, and the HNSW index, filtered to one user, visits about all vectors / the user's for each
-- row it keeps. A user with vector_lists_from vectors or more gets lists of their own (an inverted
-- file): about sqrt(vectors) centres found by k-means over their vectors, and each vector in the
-- list of its nearest centre; a search compares the query with the centres and reads the
-- vector_list_probes nearest lists. The lists hold copies of the vectors, written list by list, so
-- a list's rows mostly share pages.
-- Due when the search-term fold or the storing of vectors finds the user's messages past
-- vector_lists_from (with vectors of the model) with no lists yet, or doubled since the last build,
-- and after a model change (memory_private.note_vector_lists_due); built off the write path by
-- memory_private.run_vector_list_builds, every minute, when the user has vector_lists_from vectors.
-- A vector stored after a build joins the list of its nearest centre.
-- Private: users read their own (what search by meaning compares), jobs write.
create table memory_private.vector_lists (
    user_id uuid not null references memory.users (id) on delete cascade,
    model text not null,
    -- The centres and how many (null: none, the user's vectors being too few), and the user's
    -- messages at the last build (the search-term fold's count, which decides when to build again).
    centroids extensions.halfvec[],
    lists integer check (lists > 0),
    messages bigint check (messages >= 0),
    built_at timestamptz,
    -- From when a build is due: the user's messages passed vector_lists_from or doubled since the
    -- last build, or their vectors lagged their messages then.
    wanted_at timestamptz,
    primary key (user_id, model),
    constraint vector_lists_built check (
        (centroids is null) = (lists is null) and (messages is null) = (built_at is null)
    )
);

comment on table memory_private.vector_lists is
'Per user and embedding model: the centres of the user''s vector lists (an inverted file), and whether a build is due.';

create index vector_lists_wanted_idx on memory_private.vector_lists (wanted_at) where wanted_at is not null;

alter table memory_private.vector_lists enable row level security;

create policy "Users read their own vector lists" on memory_private.vector_lists
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.vector_lists to authenticated;
grant select, insert, update, delete on memory_private.vector_lists to service_role;

-- A copy of each vector of a user with lists, in the list of its nearest centre. Follows its
-- message's vector: dropped with it, replaced when it changes (memory_private.list_new_vectors).
create table memory_private.vector_list_entries (
    message_id bigint primary key references memory_private.message_embeddings (message_id) on delete cascade,
    user_id uuid not null,
    model text not null,
    list_no integer not null check (list_no > 0),
    embedding extensions.halfvec not null
);

comment on table memory_private.vector_list_entries is
'The vectors of users with vector lists, each in the list of its nearest centre, a list''s rows written together.';

create index vector_list_entries_list_idx on memory_private.vector_list_entries (user_id, model, list_no);

alter table memory_private.vector_list_entries enable row level security;

create policy "Users read the listed vectors of their own messages" on memory_private.vector_list_entries
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.vector_list_entries to authenticated;
grant select, insert, update, delete on memory_private.vector_list_entries to service_role;

-- The lock that orders a user's vector writes against a build of their lists: writers share it,
-- a build holds it alone, so a build reads every vector committed before it and a vector stored
-- after it is listed by the new centres.
create function memory_private.vector_lists_lock(p_user_id uuid, p_exclusive boolean)
returns void
language plpgsql
set search_path = ''
as $$
declare
    v_key bigint := pg_catalog.hashtextextended('supamem.vector_lists/' || p_user_id::text, 0);
begin
    if p_exclusive then
        perform pg_catalog.pg_advisory_xact_lock(v_key);
    else
        perform pg_catalog.pg_advisory_xact_lock_shared(v_key);
    end if;
end
$$;

revoke all on function memory_private.vector_lists_lock(uuid, boolean) from public, anon, authenticated, service_role;
grant execute on function memory_private.vector_lists_lock(uuid, boolean) to service_role;

-- The numbers (1-based) of the p_count centres nearest a vector, nearest first, among a user's
-- centres: where a vector is listed (the first) and which lists a search reads.
create function memory_private.nearest_centroids(
    p_centroids extensions.halfvec[], p_vector extensions.halfvec, p_count integer default 1
)
returns integer[]
language plpgsql
immutable
parallel safe
set search_path = ''
as $$
begin
    return array(
        select c.n::integer
        from unnest(p_centroids) with ordinality as c (centroid, n)
        order by c.centroid operator(extensions.<=>) p_vector, c.n
        limit p_count
    );
end
$$;

revoke all on function memory_private.nearest_centroids(extensions.halfvec[], extensions.halfvec, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.nearest_centroids(extensions.halfvec[], extensions.halfvec, integer)
to authenticated, service_role;

-- Which of these users are due a build of their vector lists: those with vectors of the current
-- model whose messages (the search-term fold's count) passed vector_lists_from with no lists row
-- yet, or doubled since the last build. Called by the fold for the users it counted and after
-- vectors are stored (a user's messages may be counted before their vectors come).
create function memory_private.note_vector_lists_due(p_users uuid[])
returns void
language plpgsql
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.note_vector_lists_due(uuid[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.note_vector_lists_due(uuid[]) to service_role;

-- After vectors are stored: each one of a user with built lists of its model goes into the list
-- of its nearest centre (a refusal, or a vector of another model, leaves the lists), and users
-- are noted due a build as the fold notes them.
create function memory_private.list_new_vectors()
returns trigger
language plpgsql
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.list_new_vectors() from public, anon, authenticated, service_role;

create trigger message_embeddings_listed_on_insert
after insert on memory_private.message_embeddings
referencing new table as changed
for each statement execute function memory_private.list_new_vectors();

create trigger message_embeddings_listed_on_update
after update on memory_private.message_embeddings
referencing new table as changed
for each statement execute function memory_private.list_new_vectors();
