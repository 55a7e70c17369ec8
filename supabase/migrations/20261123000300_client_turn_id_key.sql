-- A message's `metadata.client_turn_id` is an idempotency key: a client that stored a turn while
-- the database was unreachable writes it back later under the id it minted, and a retried write
-- (its first commit went through, the acknowledgement was lost) must not store it twice. The
-- index makes that the table's rule for every write path, and makes the client's "which of
-- these are stored already" lookup an index scan instead of a scan of the user's messages.
-- Partial: only messages that carry the key pay for it.
create unique index messages_client_turn_id_key
on memory.messages (user_id, (metadata ->> 'client_turn_id'), role)
where metadata ? 'client_turn_id';
comment on index memory.messages_client_turn_id_key is
'A client turn id is stored once per user and role: buffered turns are written back exactly once.';
