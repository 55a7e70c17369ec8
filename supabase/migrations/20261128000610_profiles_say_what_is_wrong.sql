-- A profile's name, time zone and attributes are checked on every way in (memory_private.check_profile)
-- and a bad one is refused with 22023 and what is wrong, where the table named only a constraint;
-- attributes nest at most 64 levels deep, as the writers' JSON does.
set check_function_bodies = off;

create or replace function memory_private.check_profile()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    perform memory_private.check_text('name', new.name, 200);
    if not memory_private.is_time_zone(new.timezone) then
        raise exception using errcode = '22023', message = format('unknown time zone %L', new.timezone),
            hint = 'A time zone is an IANA name, such as Europe/Berlin or UTC.';
    end if;
    perform memory_private.check_json('attributes', new.attributes, 'object', 100000);
    return new;
end
$function$;

create trigger profiles_checked before insert or update of name,
timezone,
attributes on memory.profiles for each row execute function memory_private.check_profile();


revoke all on function memory_private.check_profile() from public, anon, authenticated, service_role;
