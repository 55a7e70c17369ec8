-- The request limits' tunables (memory.take_request): requests per user per minute, 0 for none.
insert into memory_private.settings (key, value, description) values
('chat_rate_limit', '20', 'Chat requests (each a model call) a user may make per minute; 0: no limit.'),
('search_rate_limit', '60', 'Searches with words (each an embedding) a user may make per minute; 0: no limit.');
