-- LOCAL-ONLY bootstrap, run as the cluster's superuser `supabase_admin`: reproduces what a hosted
-- Supabase project already has before any migration runs, so the migrations and the pgTAP suite
-- run here as they do there, as a `postgres` that is not a superuser. Never apply this to a real
-- project: `scripts/migrate.py --bootstrap` refuses non-loopback hosts. Idempotent.
--
-- Modelled on the effect (not the text) of supabase/postgres migrations/db:
--   init-scripts/00000000000000-initial-schema.sql   roles, `extensions`, API role timeouts
--   migrations/10000000000000_demote-postgres.sql     postgres NOSUPERUSER BYPASSRLS, its grants
--   migrations/20211124212715_update-auth-owner.sql   auth owned by supabase_auth_admin
--   migrations/20221028101028_set_authenticator_timeout.sql, 20231130133139_set_lock_timeout_…
--   migrations/20230529180330_alter_api_roles_for_inherit.sql   the API roles INHERIT
--   migrations/20240319072844_lock_down_postgres_access_to_auth_migrations.sql
--   ansible/files/postgresql_extension_custom_scripts/pg_cron/after-create.sql
-- Privileged extensions (pg_cron, vector, pgtap) are created by supautils on the platform when
-- `postgres` asks; here they are created up front by the superuser, so a migration's
-- `create extension if not exists` finds them, exactly as a project where they are enabled.

-- Roles ---------------------------------------------------------------------------------------
do $$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'postgres') then
        create role postgres;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'supabase_auth_admin') then
        create role supabase_auth_admin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'anon') then
        create role anon;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'authenticated') then
        create role authenticated;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'service_role') then
        create role service_role;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'authenticator') then
        create role authenticator;
    end if;
end
$$;

-- The developer's role: owns what migrations create, bypasses RLS, is not a superuser.
alter role postgres nosuperuser createdb createrole login replication bypassrls password 'postgres';
alter role supabase_auth_admin nosuperuser noinherit createrole login noreplication;
alter role anon nologin inherit;
alter role authenticated nologin inherit;
alter role service_role nologin inherit bypassrls;
alter role authenticator login noinherit password 'postgres';

grant anon, authenticated, service_role to authenticator;
-- `set role authenticated` in SQL and in pgTAP files, as on a project.
grant anon, authenticated, service_role to postgres;

-- The statement timeouts PostgREST applies per request; authenticator's holds for its own session.
alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';
alter role authenticator set statement_timeout = '8s';
alter role authenticator set lock_timeout = '8s';

-- Supabase puts `extensions` on postgres' search_path, which is how unqualified pgTAP calls
-- (plan, ok, finish) resolve in `supabase test db`.
alter role postgres set search_path to "$user", public, extensions;

grant all on database postgres to postgres;
grant all on schema public to postgres;
grant usage on schema public to anon, authenticated, service_role;
-- Supabase's (hostile) defaults in public, so migrations are tested against them.
alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;

-- Extensions ----------------------------------------------------------------------------------
create schema if not exists extensions;
grant usage on schema extensions to anon, authenticated, service_role;
grant all on schema extensions to postgres;
create extension if not exists pgcrypto with schema extensions;
create extension if not exists "uuid-ossp" with schema extensions;
create extension if not exists vector with schema extensions;

-- pg_cron as supautils' after-create script leaves it: postgres schedules and reads its own jobs.
create extension if not exists pg_cron with schema pg_catalog;
grant usage on schema cron to postgres with grant option;
grant all on all functions in schema cron to postgres with grant option;
grant all privileges on all tables in schema cron to postgres with grant option;
revoke all on table cron.job from postgres;
grant select on table cron.job to postgres with grant option;

grant all on all tables in schema extensions to postgres;
grant all on all sequences in schema extensions to postgres;
grant all on all routines in schema extensions to postgres;

-- auth: GoTrue's schema, owned by supabase_auth_admin ----------------------------------------
create schema if not exists auth authorization supabase_auth_admin;
alter schema auth owner to supabase_auth_admin;
grant usage on schema auth to anon, authenticated, service_role, postgres;

-- The subset of GoTrue's auth.users that the kit references. As on Supabase, `id` has no default
-- (GoTrue supplies it), RLS is on with no policy, and only postgres (not service_role) has grants.
create table if not exists auth.users (
    id uuid not null primary key,
    email text,
    raw_app_meta_data jsonb default '{}',
    raw_user_meta_data jsonb default '{}',
    created_at timestamptz default now(),
    updated_at timestamptz default now()
);
alter table auth.users owner to supabase_auth_admin;
alter table auth.users enable row level security;
revoke all on table auth.users from public, anon, authenticated, service_role;

-- The three functions as GoTrue defines them: no search_path setting, owned by its admin.
create or replace function auth.uid() returns uuid language sql stable as $$
  select coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid $$;
create or replace function auth.role() returns text language sql stable as $$
  select coalesce(nullif(current_setting('request.jwt.claim.role', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role'))::text $$;
create or replace function auth.jwt() returns jsonb language sql stable as $$
  select coalesce(nullif(current_setting('request.jwt.claim', true), ''),
                  nullif(current_setting('request.jwt.claims', true), ''))::jsonb $$;
alter function auth.uid() owner to supabase_auth_admin;
alter function auth.role() owner to supabase_auth_admin;
alter function auth.jwt() owner to supabase_auth_admin;

grant execute on function auth.uid() to anon, authenticated, service_role;
grant execute on function auth.role() to anon, authenticated, service_role;
grant execute on function auth.jwt() to anon, authenticated, service_role;

-- The demoted postgres keeps every privilege on auth's objects, but no membership of its admin.
grant all on all tables in schema auth to postgres;
grant all on all sequences in schema auth to postgres;
grant all on all routines in schema auth to postgres;

-- Realtime -------------------------------------------------------------------------------------
-- Every Supabase project has this publication (empty at first), and postgres may add tables to
-- it; Realtime streams their changes to subscribers, each filtered by the subscriber's RLS.
do $$
begin
    if not exists (select 1 from pg_catalog.pg_publication where pubname = 'supabase_realtime') then
        create publication supabase_realtime;
    end if;
end
$$;
alter publication supabase_realtime owner to postgres;
