-- The selection area's tunables, read by memory_private.setting(): seed 004's bounds on the memory
-- block of a prompt, at most 10 memories within about 500 tokens (the seed asks for 400-600).
insert into memory_private.settings (key, value, description) values
('memory_token_budget', '500', 'Default token budget of the memory block in a prompt (seed 004: 400-600).'),
('memory_select_limit', '10', 'Most memories a prompt gets (seed 004''s hard limit).');
