-- Foreign keys on two columns get an index that starts with both, as Supabase's advisor asks
-- (unindexed_foreign_keys): each replaces the one-column index beside it, so no write pays for
-- an extra index. The messages' (conversation_id, user_id) key stays served by the
-- (conversation_id, turn_number) index (see supabase/tests/schema/advisor_lints.test.sql).

create index conversations_profile_id_user_id_idx on memory.conversations (profile_id, user_id);
drop index memory.conversations_profile_id_idx;

create index participants_profile_id_user_id_idx on memory.participants (profile_id, user_id);
drop index memory.participants_profile_id_idx;

create index memories_superseded_by_user_id_idx on memory.memories (superseded_by, user_id);
drop index memory.memories_superseded_by_idx;
