-- Why: a profile is written through the Data API (the HTTP app's routes too), and the table's
-- checks refuse a bad one by naming a constraint (profiles_timezone_check): this trigger says what
-- is wrong (22023) on every way in, and holds attributes to the JSON limits of the writers. An
-- update checks only what it changes.
create function memory_private.check_profile()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' or new.name is distinct from old.name then
        perform memory_private.check_text('name', new.name, 200);
    end if;
    if (tg_op = 'INSERT' or new.timezone is distinct from old.timezone)
        and not memory_private.is_time_zone(new.timezone) then
        raise exception using errcode = '22023', message = format('unknown time zone %L', new.timezone),
            hint = 'A time zone is an IANA name, such as Europe/Berlin or UTC.';
    end if;
    if tg_op = 'INSERT' or new.attributes is distinct from old.attributes then
        perform memory_private.check_json('attributes', new.attributes, 'object', 100000);
    end if;
    return new;
end
$$;

revoke all on function memory_private.check_profile() from public, anon, authenticated, service_role;

create trigger profiles_checked
before insert or update of name, timezone, attributes on memory.profiles
for each row execute function memory_private.check_profile();
