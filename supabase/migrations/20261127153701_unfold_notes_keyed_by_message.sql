-- A deletion or edit pending for the search-term fold is keyed by its message alone: one note per
-- message already, so the identity column and its index were a second key every trimmed turn
-- wrote.
alter table memory_private.search_unfolds drop constraint "search_unfolds_message_id_key";

alter table memory_private.search_unfolds drop constraint "search_unfolds_pkey";

drop index if exists memory_private.search_unfolds_message_id_key;

drop index if exists memory_private.search_unfolds_pkey;

alter table memory_private.search_unfolds drop column id;

create unique index search_unfolds_pkey on memory_private.search_unfolds using btree (message_id);

alter table memory_private.search_unfolds
add constraint search_unfolds_pkey primary key using index search_unfolds_pkey;
