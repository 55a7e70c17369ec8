-- The retention area's tunables, read by memory_private.setting(): seed 004's archival rule
-- (memories over 2 years old and unreferenced for 6 months, unless the user opted in to long-term
-- storage) and how long a soft-deleted memory stays restorable before it is purged.
insert into memory_private.settings (key, value, description) values
('memory_archive_age', '"2 years"', 'Memories older than this may be archived ...'),
('memory_archive_unreferenced', '"6 months"', '... when not referenced for this long (unless the user opted in).'),
('memory_purge_after', '"30 days"', 'Soft-deleted memories are purged this long after deletion.');
