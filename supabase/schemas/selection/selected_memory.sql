-- What select_memories returns for a prompt: the memory's text and kind, what ranked it (pinned,
-- score, references) and its cost in tokens, so the app can build the memory block and show chips.
create type memory.selected_memory as (
    id uuid,
    content text,
    type text,
    category text,
    confidence numeric,
    pinned boolean,
    reference_count integer,
    last_referenced_at timestamptz,
    score numeric,
    tokens integer,
    -- Seed 004's short reference, "M-{number}" (memory.memories.number).
    number integer
);

revoke all on type memory.selected_memory from public;
grant usage on type memory.selected_memory to authenticated, service_role, public;
