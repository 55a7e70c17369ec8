-- Schemas and extensions every later migration builds on.
--
-- `memory` is exposed through the Data API (supabase/config.toml); it holds the tables clients
-- read under RLS and the RPC functions they call. `memory_private` is never exposed: it holds
-- security definer helpers, settings and internals that clients must not reach directly.

create extension if not exists pg_trgm with schema extensions;
-- pg_cron is not relocatable and owns its `cron` schema; Supabase installs it in pg_catalog.
create extension if not exists pg_cron with schema pg_catalog;

create schema if not exists memory;
comment on schema memory is 'supamem: conversation memory (tables under RLS and RPC functions).';

create schema if not exists memory_private;
comment on schema memory_private is 'supamem internals: helpers, settings, queues. Never exposed.';

-- Deny by default: nothing in either schema is reachable until a migration grants it explicitly.
revoke all on schema memory from public, anon;
revoke all on schema memory_private from public, anon;
grant usage on schema memory to authenticated, service_role;
-- Policies call private helpers, so signed-in roles need usage; each function is granted one by one.
grant usage on schema memory_private to authenticated, service_role;

alter default privileges in schema memory revoke all on tables from public, anon, authenticated;
alter default privileges in schema memory revoke all on sequences from public, anon, authenticated;
alter default privileges in schema memory_private revoke all on tables from public, anon, authenticated;
alter default privileges in schema memory_private revoke all on sequences from public, anon, authenticated;

-- Functions: Postgres grants EXECUTE to PUBLIC on every new function, and a per-schema default
-- cannot take that away (only the role-wide default can, which would reach into the project's
-- other schemas). So every migration that creates functions ends by revoking PUBLIC's EXECUTE on
-- both schemas; each function is then reachable only through its explicit grant.

-- Global settings: the defaults a tenant or a conversation may override.
create table memory_private.settings (
    key text primary key check (key ~ '^[a-z][a-z0-9_]*$'),
    value jsonb not null,
    description text not null
);
alter table memory_private.settings enable row level security;
grant select, insert, update, delete on memory_private.settings to service_role;

insert into memory_private.settings (key, value, description) values
('conversation_ttl', 'null', 'Default time to live of conversation messages (an interval, null = keep forever).'),
('conversation_window', 'null', 'Default rolling window in turns (null = unlimited).'),
('sweep_batch_size', '5000', 'Rows the retention sweep deletes per batch.'),
('sweep_max_batches', '200', 'Batches one scheduled retention sweep may run before yielding.'),
('short_term_ttl', '"5 minutes"', 'Default lifetime of short-lived state (seed 001 clarification state).'),
('cron_history_retention', '"7 days"', 'How long pg_cron run details are kept.');

-- Why: every behaviour reads its defaults from one place, so a team tunes the kit with an update.
create function memory_private.setting(p_key text)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
    select s.value from memory_private.settings as s where s.key = p_key
$$;
grant execute on function memory_private.setting(text) to authenticated, service_role;

-- Why: policies and RPCs accept `p_user_id` for service_role callers and default to the signed-in
-- user; a call with neither would silently match nothing, so it is an error instead.
create function memory_private.acting_user(p_user_id uuid)
returns uuid
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := coalesce(p_user_id, auth.uid());
begin
    if v_user is null then
        raise exception using
            errcode = '22023',
            message = 'user id required',
            hint = 'Pass p_user_id, or call as a signed-in user.';
    end if;
    return v_user;
end
$$;
grant execute on function memory_private.acting_user(uuid) to authenticated, service_role;

-- Why: a time zone that Postgres cannot resolve would break every week and month boundary later.
create function memory_private.is_time_zone(p_name text)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
    perform now() at time zone p_name;
    return true;
exception when invalid_parameter_value then
    return false;
end
$$;
grant execute on function memory_private.is_time_zone(text) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
