-- The writers' JSON (a message's metadata and payloads, a key-value or short-term value, a
-- conversation's metadata) nests at most 64 levels deep: a client parses JSON recursively and stops
-- somewhere (pydantic's parser at 200 levels), and a value it cannot read failed every read of its row.
set check_function_bodies = off;

create or replace function memory_private.check_json(p_what text, p_value jsonb, p_type text, p_max_bytes integer)
returns void
language plpgsql
immutable
set search_path to ''
as $function$
begin
    if p_type is not null and jsonb_typeof(p_value) is distinct from p_type then
        raise exception using errcode = '22023', message = format(
            '%s must be a JSON %s, not %s', p_what, p_type, coalesce(jsonb_typeof(p_value), 'missing')
        );
    end if;
    if octet_length(p_value::text) > p_max_bytes then
        raise exception using errcode = '22023',
            message = format('%s must be at most %s bytes as JSON text', p_what, p_max_bytes);
    end if;
    if jsonb_path_exists(p_value, 'strict $.**{64}') then
        raise exception using errcode = '22023', message = format('%s must nest at most 64 levels deep', p_what);
    end if;
end
$function$;


revoke all on function memory_private.check_json(text, jsonb, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_json(text, jsonb, text, integer) to authenticated, service_role;
