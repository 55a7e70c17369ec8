-- Per user, the size of the corpus lexical search ranks over (messages and lexemes: BM25's N and
-- average length), so a query reads both from one row instead of counting the history. Kept by
-- the search-term fold (memory_private.fold_search_terms), off the write path: a query adds the
-- messages not folded yet and takes out the deleted ones not unfolded yet. Private; users read
-- only their own row.
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
