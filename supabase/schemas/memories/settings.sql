-- The memories area's tunables, read by memory_private.setting(): the dedup threshold, memory_cap
-- (seed 004's 1,000 live memories per user and profile), the extraction rate limit (60 per user per
-- minute), and which claims count as sensitive and the confidence they may keep (seed 004).
insert into memory_private.settings (key, value, description) values
('dedup_threshold', '0.85', 'Trigram similarity at or above which a new memory is a duplicate of an active one.');

insert into memory_private.settings (key, value, description) values
('memory_cap', '1000', 'Active memories per user and profile; past it the lowest-scored is archived.'),
('extraction_rate_limit', '60', 'Extractions a user may apply per minute.');

insert into memory_private.settings (key, value, description) values
(
    'sensitive_categories', '["health", "finance"]',
    'Categories of claims kept with low confidence when drawn from a conversation.'
),
('sensitive_confidence_max', '0.3', 'The highest confidence a sensitive claim drawn from a conversation keeps.');
