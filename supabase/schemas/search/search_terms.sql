-- Why: BM25 needs each query term's document frequency among the user's messages, and counting it
-- per query grew with the history. A pg_cron job folds new messages in every minute and takes
-- deleted ones out, off the write path (a delete only notes what it removed, in search_unfolds);
-- messages not folded yet, and deleted ones not unfolded yet, are counted at query time, so
-- frequencies stay right while the job lags.
create table memory_private.search_terms (
    user_id uuid not null references memory.users (id) on delete cascade,
    lexeme text not null,
    documents integer not null check (documents >= 0),
    primary key (user_id, lexeme)
);

comment on table memory_private.search_terms is
'Per user and lexeme: in how many of the user''s messages it occurs (BM25''s document frequency).';

alter table memory_private.search_terms enable row level security;

create policy "Users read the term statistics of their own messages" on memory_private.search_terms
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.search_terms to authenticated;
grant select, insert, update, delete on memory_private.search_terms to service_role;

-- Deleted messages that were folded, waiting for the next fold to take them out of search_terms and
-- search_corpus. Written by the delete trigger below, emptied by the fold.
create table memory_private.search_unfolds (
    id bigint generated always as identity primary key,
    user_id uuid not null references memory.users (id) on delete cascade,
    search tsvector not null
);

comment on table memory_private.search_unfolds is
'Deleted messages whose words the next search-term fold takes out of the statistics.';

create index search_unfolds_user_id_idx on memory_private.search_unfolds (user_id);

alter table memory_private.search_unfolds enable row level security;

create policy "Users read what is pending for their own statistics" on memory_private.search_unfolds
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.search_unfolds to authenticated;
grant select on memory_private.search_unfolds to service_role;

-- Count the next messages (at most p_batch, by id) into search_terms and search_corpus, and take
-- out the deleted ones noted since; returns how many messages were counted. One fold at a time
-- (the row lock); a message whose transaction commits after a fold passed its id is not counted
-- (a weight off by one, not a wrong result).
create function memory_private.fold_search_terms(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_from bigint;
    v_to bigint;
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    with gone as (
        delete from memory_private.search_unfolds returning user_id, search
    ),
    sizes as (
        update memory_private.search_corpus as c
        set documents = greatest(0, c.documents - g.documents), lexemes = greatest(0, c.lexemes - g.lexemes)
        from (
            select x.user_id, count(*) as documents, sum(length(x.search)) as lexemes from gone as x group by x.user_id
        ) as g
        where c.user_id = g.user_id
    )
    update memory_private.search_terms as s
    set documents = greatest(0, s.documents - g.documents)
    from (
        select x.user_id, w.lexeme, count(*)::integer as documents
        from gone as x
        cross join lateral unnest(tsvector_to_array(x.search)) as w (lexeme)
        group by x.user_id, w.lexeme
    ) as g
    where s.user_id = g.user_id and s.lexeme = g.lexeme;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is null then
        return 0;
    end if;
    with batch as materialized (
        select m.user_id, m.search from memory.messages as m where m.id > v_from and m.id <= v_to
    ),
    sizes as (
        insert into memory_private.search_corpus as c (user_id, documents, lexemes)
        select b.user_id, count(*), sum(length(b.search)) from batch as b group by b.user_id
        on conflict (user_id) do update
        set documents = c.documents + excluded.documents, lexemes = c.lexemes + excluded.lexemes
    )
    insert into memory_private.search_terms as s (user_id, lexeme, documents)
    select b.user_id, w.lexeme, count(*)
    from batch as b
    cross join lateral unnest(tsvector_to_array(b.search)) as w (lexeme)
    group by b.user_id, w.lexeme
    on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents;
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
end
$$;

revoke all on function memory_private.fold_search_terms(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer) to service_role;

-- Deleted messages that were counted are noted for the next fold (one insert per statement): the
-- delete itself updates no statistics row.
create function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    insert into memory_private.search_unfolds (user_id, search)
    select o.user_id, o.search
    from old_messages as o
    where o.id <= (select f.through from memory_private.message_scans as f where f.name = 'search_terms')
        -- An erased user's statistics went with the user.
        and exists (select 1 from memory.users as u where u.id = o.user_id);
    return null;
end
$$;

create trigger messages_unfold_search_terms
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.unfold_search_terms();

revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;
