-- The job queue's tunables, read by memory_private.setting(): attempts before dead-lettering, retry
-- backoff, the default lease, how long finished jobs are kept, the characters of a message a prompt
-- carries at most, and job_kinds, the kinds the database queues at all (an app that runs no
-- workers sets [] so nothing piles up).
insert into memory_private.settings (key, value, description) values
('job_max_attempts', '5', 'Attempts before a job is dead-lettered.'),
('job_backoff_base', '"10 seconds"', 'First retry delay; each further attempt doubles it.'),
('job_backoff_max', '"1 hour"', 'Longest retry delay.'),
('job_lease', '"5 minutes"', 'Default lease of a claimed job.'),
('job_retention', '"14 days"', 'Finished jobs are kept this long for the stats view.'),
(
    'llm_text_chars', '20000',
    'Characters of a message a prompt (a job''s, a chat''s window) carries at most: its beginning, about 5,000 tokens.'
),
(
    'job_kinds', '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year"]',
    'Kinds of job the database queues; an app that runs no workers sets [] and nothing piles up.'
);

update memory_private.settings
set value = value || '["embed"]'::jsonb
where key = 'job_kinds' and not value ? 'embed';
