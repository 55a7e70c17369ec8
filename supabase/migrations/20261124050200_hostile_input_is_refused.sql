-- Hostile or careless input is refused with a clear error instead of being stored or acted on.
--
-- Sizes: a message's text was bounded (100,000 characters), but its JSON fields, a conversation's
-- title and metadata, key-value and short-term values, a memory's context and a profile's
-- attributes were not: one request could store megabytes that every read, prompt and export then
-- carries. Each is bounded by a check constraint (23514 names it), added NOT VALID and validated
-- separately so a deployed database is scanned without blocking writes. JSON is measured as its
-- text. A team that needs more replaces the constraint.
--
-- Time zones: a profile's zone must be a named zone of the time zone database ('Asia/Manila',
-- 'UTC', kept in memory_private.time_zones). Postgres also accepts POSIX specifications such as '+25:00' or 'AAA-167:59:59', which
-- name no place and make week and month boundaries meaningless.

alter table memory.conversations
add constraint conversations_title_length check (length(title) <= 500) not valid,
add constraint conversations_metadata_size check (octet_length(metadata::text) <= 100000) not valid;
alter table memory.conversations validate constraint conversations_title_length;
alter table memory.conversations validate constraint conversations_metadata_size;

-- Tool calls carry a tool's input and output (seed 002), so they get the most room.
alter table memory.messages
add constraint messages_tool_calls_size check (octet_length(tool_calls::text) <= 1000000) not valid,
add constraint messages_suggested_values_size check (octet_length(suggested_values::text) <= 100000) not valid,
add constraint messages_suggested_actions_size check (octet_length(suggested_actions::text) <= 100000) not valid,
add constraint messages_custom_payload_size check (octet_length(custom_payload::text) <= 100000) not valid,
add constraint messages_metadata_size check (octet_length(metadata::text) <= 100000) not valid;
alter table memory.messages validate constraint messages_tool_calls_size;
alter table memory.messages validate constraint messages_suggested_values_size;
alter table memory.messages validate constraint messages_suggested_actions_size;
alter table memory.messages validate constraint messages_custom_payload_size;
alter table memory.messages validate constraint messages_metadata_size;

alter table memory.user_kv
add constraint user_kv_value_size check (octet_length(value::text) <= 100000) not valid;
alter table memory.user_kv validate constraint user_kv_value_size;

alter table memory.short_term_state
add constraint short_term_state_value_size check (octet_length(value::text) <= 100000) not valid;
alter table memory.short_term_state validate constraint short_term_state_value_size;

alter table memory.memories
add constraint memories_context_size check (octet_length(context::text) <= 100000) not valid;
alter table memory.memories validate constraint memories_context_size;

alter table memory.profiles
add constraint profiles_name_length check (length(name) <= 200) not valid,
add constraint profiles_attributes_size check (octet_length(attributes::text) <= 100000) not valid;
alter table memory.profiles validate constraint profiles_name_length;
alter table memory.profiles validate constraint profiles_attributes_size;

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

-- Why: week and month boundaries are cut in the profile's zone, which must name a place.
-- Declared immutable because a check constraint needs it; a zone removed later still passes
-- the rows already stored.
create or replace function memory_private.is_time_zone(p_name text)
returns boolean
language sql
immutable
security definer
set search_path = ''
as $$
    select exists (select 1 from memory_private.time_zones as z where z.name = p_name)
$$;

-- Why: the settings of a user the caller may not write are not found (P0002), never a row of
-- nulls that reads as "memory on, not opted in".
create or replace function memory.set_memory_settings(
    p_memory_paused boolean default null, p_long_term_opt_in boolean default null, p_user_id uuid default null
)
returns memory.users
language plpgsql
set search_path = ''
as $$
declare
    v_row memory.users;
begin
    update memory.users as u
    set memory_paused = coalesce(p_memory_paused, u.memory_paused),
        long_term_opt_in = coalesce(p_long_term_opt_in, u.long_term_opt_in)
    where u.id = memory_private.writing_user(p_user_id)
    returning u.* into v_row;
    if not found then
        raise exception using errcode = 'P0002', message = 'user not found';
    end if;
    return v_row;
end
$$;

-- Why: a user's rows carry their tenant (tenant admins read by it); moving a user would leave
-- every row they own readable by the old tenant's admin. A move is an export and an import.
-- Placing a user who has no tenant yet moves nothing out of anyone's sight, so it stays allowed.
create function memory_private.users_keep_their_tenant()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    raise exception using
        errcode = '55000',
        message = 'a user''s tenant cannot change',
        hint = 'Export the user''s memories, erase the user, and import them for a user of the new tenant.';
end
$$;

create trigger users_keep_their_tenant
before update of tenant_id on memory.users
for each row when (old.tenant_id is not null and old.tenant_id is distinct from new.tenant_id)
execute function memory_private.users_keep_their_tenant();

revoke execute on all routines in schema memory, memory_private from public;
