-- The summaries area's tunables, read by memory_private.setting(): summary_interval (seed 004's
-- SUMMARY_INTERVAL, a conversation summary every 4 turns) and how far back the weekly and monthly
-- schedulers look for missing summaries.
insert into memory_private.settings (key, value, description) values
('summary_interval', '4', 'A conversation summary every N turns (seed 004''s SUMMARY_INTERVAL).'),
('summary_lookback', '"8 weeks"', 'How far back the weekly and monthly schedulers look for missing summaries.');
