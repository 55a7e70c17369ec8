-- Why: a table's check constraints refuse a value by naming the constraint alone
-- (messages_content_length, user_kv_value_check): the writers check their input first and say
-- what is wrong (22023). The tables keep their constraints for every other way in.
create function memory_private.check_text(p_what text, p_value text, p_max integer)
returns void
language plpgsql
immutable
set search_path = ''
as $$
begin
    if p_value is null or p_value !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = format('%s must not be empty', p_what);
    end if;
    if length(p_value) > p_max then
        raise exception using errcode = '22023', message = format('%s must be at most %s characters', p_what, p_max);
    end if;
end
$$;

revoke all on function memory_private.check_text(text, text, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.check_text(text, text, integer) to authenticated, service_role;

-- A value of the JSON type given (none: any type, and no value passes), of at most p_max_bytes as
-- text, nested at most 64 levels deep: clients parse JSON recursively and stop somewhere (pydantic's
-- parser at 200 levels), and a value they cannot read fails every read of the row that holds it.
create function memory_private.check_json(p_what text, p_value jsonb, p_type text, p_max_bytes integer)
returns void
language plpgsql
immutable
set search_path = ''
as $$
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
$$;

revoke all on function memory_private.check_json(text, jsonb, text, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_json(text, jsonb, text, integer) to authenticated, service_role;
