-- Why: a memory comes in many ways (remember, a revision, an import, an extraction, the Data API),
-- and the table's checks refuse bad text or context by naming a constraint (memories_content_check)
-- and let JSON nest as deep as it likes, past what a client parses: this trigger says what is
-- wrong (22023) and holds context to the writers' JSON limits. A memory with text that passes and
-- no context costs no call.
create function memory_private.check_memory_row()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' or new.content is distinct from old.content then
        perform memory_private.check_text('content', new.content, 2000);
    end if;
    if tg_op = 'INSERT' or new.context is distinct from old.context then
        perform memory_private.check_json('context', new.context, 'object', 100000);
    end if;
    return new;
end
$$;

revoke all on function memory_private.check_memory_row() from public, anon, authenticated, service_role;

create trigger memories_checked
before insert or update of content, context on memory.memories
for each row when (new.content !~ '[^[:space:]]' or length(new.content) > 2000 or new.context <> '{}'::jsonb)
execute function memory_private.check_memory_row();
