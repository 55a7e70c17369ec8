-- The kit's two schemas: `memory` is exposed to the Data API (tables under RLS, RPC functions);
-- `memory_private` never is (helpers, settings, queues). Extensions: pg_trgm (similarity), pg_cron
-- (schedules), vector (embeddings). Deny by default: nothing in
-- either schema is reachable until the object that needs it grants it explicitly.

-- Function bodies are checked when they run, not when they load (as in pg_dump's output), so a
-- function may name a table that a later file creates.
set check_function_bodies = off;

create extension if not exists pg_trgm with schema extensions;

-- pg_cron is not relocatable and owns its `cron` schema; Supabase installs it in pg_catalog.
create extension if not exists pg_cron with schema pg_catalog;

create schema if not exists memory;

comment on schema memory is 'supamem: conversation memory (tables under RLS and RPC functions).';

create schema if not exists memory_private;

comment on schema memory_private is 'supamem internals: helpers, settings, queues. Never exposed.';

-- Deny by default: nothing in either schema is reachable until its object grants it explicitly.
-- Functions: Postgres grants EXECUTE to PUBLIC on every new function, and a per-schema default
-- cannot take that away (only the role-wide default can, which would reach into the project's
-- other schemas). So every function's file revokes it and grants EXECUTE to whom it serves.

revoke all on schema memory from public, anon;

revoke all on schema memory_private from public, anon;

grant usage on schema memory to authenticated, service_role;

-- Policies call private helpers, so signed-in roles need usage; each function is granted one by one.
grant usage on schema memory_private to authenticated, service_role;

alter default privileges in schema memory revoke all on tables from public, anon, authenticated;

alter default privileges in schema memory revoke all on sequences from public, anon, authenticated;

alter default privileges in schema memory_private revoke all on tables from public, anon, authenticated;

alter default privileges in schema memory_private revoke all on sequences from public, anon, authenticated;

create extension if not exists vector with schema extensions;
