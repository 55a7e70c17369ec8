-- Per user and lexeme, the messages holding it, each with the lexeme's frequency and the message's
-- length: what BM25 needs, read newest first from the index alone. A search's candidates and their
-- first scores come from here, so their cost does not follow how far apart the matches lie in the
-- messages' heap (read from there, the newest 500 matches of a word used through a long history
-- lay in about as many pages). Kept by the search-term fold, off the write path; the messages it
-- has not reached are read at query time. Private; users read only their own rows.
create table memory_private.search_postings (
    user_id uuid not null references memory.users (id) on delete cascade,
    lexeme text not null,
    message_id bigint not null,
    frequency smallint not null check (frequency > 0),
    length integer not null check (length > 0),
    primary key (user_id, lexeme, message_id) include (frequency, length)
)
-- Vacuumed after every 50,000 new postings (about 4,000 messages), not after a fifth of the table:
-- an index-only scan reads the heap for rows newer than the last vacuum, and a search reads the
-- newest postings first.
with (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 50000);

comment on table memory_private.search_postings is
'Per user and lexeme: the messages holding it, with its frequency there and their length (BM25''s postings).';

alter table memory_private.search_postings enable row level security;

create policy "Users read the postings of their own messages" on memory_private.search_postings
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.search_postings to authenticated;
grant select on memory_private.search_postings to service_role;
