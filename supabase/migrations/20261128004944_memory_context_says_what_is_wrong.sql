-- A memory's context is checked on every way in (memory_private.check_memory_context): what is wrong
-- is said (22023), and it nests at most 64 levels deep, as the writers' JSON does.
set check_function_bodies = off;

create or replace function memory_private.check_memory_context()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    if tg_op = 'INSERT' or new.context is distinct from old.context then
        perform memory_private.check_json('context', new.context, 'object', 100000);
    end if;
    return new;
end
$function$;

create trigger memories_context_checked before insert or update of context on memory.memories for each row when (
    (new.context <> '{}'::jsonb)
) execute function memory_private.check_memory_context();


revoke all on function memory_private.check_memory_context() from public, anon, authenticated, service_role;
