-- LOCAL-ONLY bootstrap: reproduces what a hosted Supabase project already has before any
-- migration runs (roles, the `extensions` schema, a minimal `auth` schema, the CLI's migration
-- table). Never apply this to a real project: `scripts/migrate.py --bootstrap` refuses
-- non-loopback hosts. Idempotent: safe to re-run on every `make db`.
--
-- Modelled on supabase/postgres migrations/db/init-scripts (00000000000000-initial-schema.sql,
-- 00000000000003-post-setup.sql); supabase_admin and the other service roles are omitted.

-- Roles ---------------------------------------------------------------------------------------
do $$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'anon') then
        create role anon nologin noinherit;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'authenticated') then
        create role authenticated nologin noinherit;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'service_role') then
        create role service_role nologin noinherit bypassrls;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'authenticator') then
        create role authenticator login noinherit;
    end if;
end
$$;

-- Re-assert attributes in case the roles pre-existed with other ones.
alter role anon nologin noinherit;
alter role authenticated nologin noinherit;
alter role service_role nologin noinherit bypassrls;
alter role authenticator login noinherit password 'postgres';

grant anon, authenticated, service_role to authenticator;

-- Supabase puts `extensions` on postgres' search_path, which is how unqualified pgTAP calls
-- (plan, ok, finish) resolve in `supabase test db`.
alter role postgres set search_path to "$user", public, extensions;

-- Extensions ----------------------------------------------------------------------------------
create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service_role;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists "uuid-ossp" with schema extensions;

-- public: Supabase's (hostile) defaults, so migrations are tested against them ---------------
grant usage on schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;

-- auth ----------------------------------------------------------------------------------------
create schema if not exists auth;
grant usage on schema auth to anon, authenticated, service_role;

-- The subset of GoTrue's auth.users that the kit references. As on Supabase, `id` has no default
-- (GoTrue supplies it), so tests that pass here pass under `supabase test db` too.
create table if not exists auth.users (
    id uuid not null primary key,
    email text,
    raw_app_meta_data jsonb default '{}',
    raw_user_meta_data jsonb default '{}',
    created_at timestamptz default now(),
    updated_at timestamptz default now()
);
alter table auth.users alter column id drop default;  -- clusters bootstrapped with one earlier
revoke all on table auth.users from public, anon, authenticated;
grant select on table auth.users to service_role;

-- The three functions exactly as Supabase defines them.
create or replace function auth.uid() returns uuid language sql stable set search_path = '' as $$
  select coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid $$;
create or replace function auth.role() returns text language sql stable set search_path = '' as $$
  select coalesce(nullif(current_setting('request.jwt.claim.role', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role'))::text $$;
create or replace function auth.jwt() returns jsonb language sql stable set search_path = '' as $$
  select coalesce(nullif(current_setting('request.jwt.claim', true), ''),
                  nullif(current_setting('request.jwt.claims', true), ''))::jsonb $$;

grant execute on function auth.uid() to anon, authenticated, service_role;
grant execute on function auth.role() to anon, authenticated, service_role;
grant execute on function auth.jwt() to anon, authenticated, service_role;

-- Realtime -------------------------------------------------------------------------------------
-- Every Supabase project has this publication (empty at first); Realtime streams the changes of
-- the tables in it to subscribers, each filtered by the subscriber's RLS.
do $$
begin
    if not exists (select 1 from pg_catalog.pg_publication where pubname = 'supabase_realtime') then
        create publication supabase_realtime;
    end if;
end
$$;

-- Supabase CLI's migration history ------------------------------------------------------------
create schema if not exists supabase_migrations;
create table if not exists supabase_migrations.schema_migrations (
    version text primary key,
    statements text [],
    name text
);
