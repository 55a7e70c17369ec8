-- Medical and financial claims drawn from a conversation are kept only with low confidence
-- (issue 4: "skipped or stored with low confidence"). The extraction prompt asks the model for
-- this, but a model may not comply; the table makes it true for every write path. A memory the
-- user states outright (no source message) keeps the confidence it was given.

insert into memory_private.settings (key, value, description) values
(
    'sensitive_categories', '["health", "finance"]',
    'Categories of claims kept with low confidence when drawn from a conversation.'
),
('sensitive_confidence_max', '0.3', 'The highest confidence a sensitive claim drawn from a conversation keeps.');

-- Why: a before trigger, so dedup's "keep the higher confidence", revisions and imports are capped
-- as inserts are.
create function memory_private.cap_sensitive_confidence()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if new.source_message_id is not null
        and memory_private.setting('sensitive_categories') ? lower(new.category) then
        new.confidence := least(new.confidence, (memory_private.setting('sensitive_confidence_max') #>> '{}')::numeric);
    end if;
    return new;
end
$$;

create trigger memories_cap_sensitive_confidence
before insert or update of confidence, category, source_message_id on memory.memories
for each row execute function memory_private.cap_sensitive_confidence();

revoke execute on all routines in schema memory, memory_private from public;
