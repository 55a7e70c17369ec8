-- Why: week and month boundaries are cut in the profile's zone, which must name a place.
-- Declared immutable because a check constraint needs it; a zone removed later still passes
-- the rows already stored.
create function memory_private.is_time_zone(p_name text)
returns boolean
language plpgsql
immutable
security definer
set search_path = ''
as $$
begin
    return exists (select 1 from memory_private.time_zones as z where z.name = p_name);
end
$$;

revoke all on function memory_private.is_time_zone(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.is_time_zone(text) to authenticated, service_role;

-- The named zones, read once from the time zone database: pg_timezone_names scans the zone
-- files (about 30 ms a call), too slow for a check on every profile write. A server whose zone
-- database gained a zone refreshes the list by running this insert again.
create table memory_private.time_zones (
    name text primary key
);

alter table memory_private.time_zones enable row level security;

insert into memory_private.time_zones (name)
select z.name from pg_catalog.pg_timezone_names as z
on conflict (name) do nothing;
