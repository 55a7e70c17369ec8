-- Why: a memory's type, category and confidence are checked by the table, whose refusals name only
-- a constraint (memories_type_fkey, memories_confidence_check): the writers check them first and
-- say what is wrong (22023). A blank category is none, as revise_memory's empty one clears it.
create function memory_private.check_memory_fields(p_type text, p_category text, p_confidence numeric)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
    if p_type is not null and not exists (select 1 from memory.memory_types as t where t.type = p_type) then
        raise exception using errcode = '22023', message = format('unknown memory type %L', p_type),
            hint = 'One of: ' || (select string_agg(t.type, ', ' order by t.type) from memory.memory_types as t);
    end if;
    if length(p_category) > 100 then
        raise exception using errcode = '22023', message = 'a category is at most 100 characters';
    end if;
    if not p_confidence between 0 and 1 then
        raise exception using errcode = '22023', message = 'confidence must be between 0 and 1';
    end if;
end
$$;

revoke all on function memory_private.check_memory_fields(text, text, numeric)
from public, anon, authenticated, service_role;
grant execute on function memory_private.check_memory_fields(text, text, numeric) to authenticated, service_role;
