-- Seed 001's "text length limits on query and response": a message is at most 100,000 characters
-- (about 25,000 tokens, more than a chat model's answer and any sensible question). Without a
-- bound one request could store megabytes that every prompt, export and search then carries.
-- Added NOT VALID and validated separately, so a deployed database is scanned without blocking
-- writes (VALIDATE takes a SHARE UPDATE EXCLUSIVE lock only). A team that needs more replaces
-- the constraint.
alter table memory.messages
add constraint messages_content_length check (length(content) <= 100000) not valid;
alter table memory.messages validate constraint messages_content_length;
