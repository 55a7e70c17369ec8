-- Per user, the size of the corpus lexical search ranks over (messages and lexemes: BM25's N and
-- average length), so a query reads both from one row instead of counting the history. Private;
-- users read only their own row, and only the triggers below write it.
create table memory_private.search_corpus (
    user_id uuid primary key references memory.users (id) on delete cascade,
    documents bigint not null default 0 check (documents >= 0),
    lexemes bigint not null default 0 check (lexemes >= 0)
);

comment on table memory_private.search_corpus is
'Per user: how many messages and lexemes BM25 ranks over (N and the average length).';

alter table memory_private.search_corpus enable row level security;

create policy "Users read the size of their own corpus" on memory_private.search_corpus
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.search_corpus to authenticated;
grant select on memory_private.search_corpus to service_role;

-- Why: BM25 needs the corpus size and average length per user at query time; counting them per
-- query is linear in the history. One update per statement (not per row) keeps the write path lean.
create function memory_private.count_search_corpus()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' then
        insert into memory_private.search_corpus as s (user_id, documents, lexemes)
        select n.user_id, count(*), sum(length(n.search))
        from new_messages as n
        group by n.user_id
        on conflict (user_id) do update
        set documents = s.documents + excluded.documents, lexemes = s.lexemes + excluded.lexemes;
    else
        update memory_private.search_corpus as s
        set documents = greatest(0, s.documents - g.documents), lexemes = greatest(0, s.lexemes - g.lexemes)
        from (
            select o.user_id, count(*) as documents, sum(length(o.search)) as lexemes
            from old_messages as o
            group by o.user_id
        ) as g
        where s.user_id = g.user_id;
    end if;
    return null;
end
$$;

create trigger messages_count_search_corpus_insert
after insert on memory.messages
referencing new table as new_messages
for each statement execute function memory_private.count_search_corpus();

create trigger messages_count_search_corpus_delete
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.count_search_corpus();

revoke all on function memory_private.count_search_corpus() from public, anon, authenticated, service_role;
