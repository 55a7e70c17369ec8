-- A chat that answered a pending clarification clears it only while it is the one it read:
-- memory.short_term_delete takes the value to compare (seed 001's short-term memory).
drop function if exists memory.short_term_delete(p_key text, p_user_id uuid);

set check_function_bodies = off;

create or replace function memory.short_term_delete(
    p_key text, p_user_id uuid default null::uuid, p_value jsonb default null::jsonb
)
returns boolean
language plpgsql
set search_path to ''
as $function$
begin
    delete from memory.short_term_state as s
    where s.user_id = memory_private.acting_user(p_user_id) and s.key = p_key
        and (p_value is null or s.value = p_value);
    return found;
end
$function$;


revoke all on function memory.short_term_delete(text, uuid, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.short_term_delete(text, uuid, jsonb) to authenticated, service_role;
