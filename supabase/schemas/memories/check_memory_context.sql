-- Why: a memory's context is JSON a writer passes along (remember, an import, an extraction), and
-- the table's checks refuse a bad one by naming a constraint (memories_context_check) and let it
-- nest as deep as it likes, past what a client parses: this trigger says what is wrong (22023)
-- and holds it to the writers' JSON limits. A memory without context costs no call.
create function memory_private.check_memory_context()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' or new.context is distinct from old.context then
        perform memory_private.check_json('context', new.context, 'object', 100000);
    end if;
    return new;
end
$$;

revoke all on function memory_private.check_memory_context() from public, anon, authenticated, service_role;

create trigger memories_context_checked
before insert or update of context on memory.memories
for each row when (new.context <> '{}'::jsonb)
execute function memory_private.check_memory_context();
