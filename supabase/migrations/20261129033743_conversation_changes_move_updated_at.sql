-- Seed 002's updated_at moves on every change of a conversation (a rename, archiving, its profile,
-- mode or metadata), not only with a new turn; a turn's own update fires no trigger.
create trigger conversations_touch_updated_at
before update of title, archived, remember, profile_id, mode, metadata on memory.conversations
for each row when (
    (old.title, old.archived, old.remember, old.profile_id, old.mode, old.metadata)
    is distinct from (new.title, new.archived, new.remember, new.profile_id, new.mode, new.metadata)
)
execute function memory_private.touch_updated_at();
