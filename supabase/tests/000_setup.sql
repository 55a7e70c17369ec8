-- Test helpers shared by every pgTAP file. Runs first (alphabetical order) and, unlike the other
-- files, persists (no begin/rollback), so later files can call tests.*. Idempotent.
-- Mirrors usebasejump/supabase-test-helpers (authenticate_as, rls_enabled, ...), keyed by
-- auth.users.id instead of a test identifier.

set client_min_messages = warning;

create schema if not exists extensions;
create extension if not exists pgtap with schema extensions;

create schema if not exists tests;
revoke all on schema tests from public;
grant usage on schema tests to anon, authenticated, service_role;

-- A Supabase Auth user (a row in auth.users); returns its id. Call it as postgres, before
-- switching identity.
create or replace function tests.create_auth_user(p_email text)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_id uuid;
begin
    insert into auth.users (id, email, raw_user_meta_data)
    values (gen_random_uuid(), p_email, pg_catalog.jsonb_build_object('test_email', p_email))
    returning id into v_id;
    return v_id;
end
$$;

-- Act as a signed-in user for the rest of the transaction, the way PostgREST does with a JWT:
-- role authenticated and request.jwt.claims carrying sub (what auth.uid() reads).
create or replace function tests.authenticate_as(p_user uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
    if p_user is null then
        raise exception using errcode = '22004', message = 'tests.authenticate_as: user id must not be null';
    end if;
    perform pg_catalog.set_config('role', 'authenticated', true);
    perform pg_catalog.set_config(
        'request.jwt.claims',
        pg_catalog.json_build_object('sub', p_user, 'role', 'authenticated')::text,
        true
    );
end
$$;

-- Act as the service role (bypasses RLS), as the jobs and app servers do.
create or replace function tests.authenticate_as_service_role()
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform pg_catalog.set_config('role', 'service_role', true);
    perform pg_catalog.set_config(
        'request.jwt.claims', pg_catalog.json_build_object('role', 'service_role')::text, true
    );
end
$$;

-- Act as an anonymous client: role anon, no claims (auth.uid() is null).
create or replace function tests.authenticate_as_anon()
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform pg_catalog.set_config('role', 'anon', true);
    perform pg_catalog.set_config('request.jwt.claims', '', true);
end
$$;

-- Back to the test runner (postgres, no claims) for the rest of the transaction, so setup steps
-- between identities neither run as the last user nor carry its auth.uid(). `reset role` alone
-- keeps request.jwt.claims, and the message trigger would still see the previous user.
-- (SET ROLE is checked against the session user, postgres, so this works from any identity.)
create or replace function tests.clear_authentication()
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform pg_catalog.set_config('role', 'none', true);
    perform pg_catalog.set_config('request.jwt.claims', '', true);
end
$$;

-- Name a value a test created (a user id, a conversation id, a message id) so later steps can use
-- it under any identity, including inside the SQL text given to throws_ok / is_empty. Stored as a
-- transaction-local setting (`tests.<name>`), so it disappears with the test's rollback.
-- Returns the value, so `select tests.remember('owner', tests.create_auth_user('o@example.test'))`.
create or replace function tests.remember(p_name text, p_value anyelement)
returns anyelement
language plpgsql
set search_path = ''
as $$
begin
    if p_name !~ '^[a-z][a-z0-9_]*$' then
        raise exception using errcode = '22023', message = pg_catalog.format('tests.remember: bad name %L', p_name);
    end if;
    perform pg_catalog.set_config('tests.' || p_name, p_value::text, true);
    return p_value;
end
$$;

-- The value remembered under p_name, as text (cast it: `tests.recall('owner')::uuid`). An unknown
-- name is an error, so a typo cannot silently compare against null.
create or replace function tests.recall(p_name text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
    v_value text := pg_catalog.current_setting('tests.' || p_name, true);
begin
    if v_value is null or v_value = '' then
        raise exception using errcode = '22023', message = pg_catalog.format('tests.recall: nothing remembered as %L', p_name);
    end if;
    return v_value;
end
$$;

-- The five identities the RLS and RPC tests play, created fresh inside the calling test's
-- transaction and remembered by name (tests.recall):
--   tenant_a, tenant_b  two tenants
--   owner               a signed-in user registered in tenant_a, whose data is under test
--   stranger            another signed-in user of the same tenant_a (isolation is per user, not
--                       only per tenant)
--   admin_a             an admin of tenant_a (the owner's tenant), not a memory user itself
--   admin_b             an admin of tenant_b
-- anon and service_role need no rows. Call it as postgres, before switching identity.
create or replace function tests.create_cast(p_label text)
returns void
language plpgsql
set search_path = ''
as $$
declare
    v_tenant_a uuid;
    v_tenant_b uuid;
    v_owner uuid := tests.create_auth_user(p_label || '.owner@supamem.test');
    v_stranger uuid := tests.create_auth_user(p_label || '.stranger@supamem.test');
    v_admin_a uuid := tests.create_auth_user(p_label || '.admin-a@supamem.test');
    v_admin_b uuid := tests.create_auth_user(p_label || '.admin-b@supamem.test');
begin
    insert into memory.tenants (name) values (p_label || ' tenant A') returning id into v_tenant_a;
    insert into memory.tenants (name) values (p_label || ' tenant B') returning id into v_tenant_b;
    insert into memory.users (id, auth_user_id, tenant_id) values
    (v_owner, v_owner, v_tenant_a),
    (v_stranger, v_stranger, v_tenant_a);
    insert into memory.tenant_admins (tenant_id, user_id) values (v_tenant_a, v_admin_a), (v_tenant_b, v_admin_b);
    perform tests.remember('tenant_a', v_tenant_a);
    perform tests.remember('tenant_b', v_tenant_b);
    perform tests.remember('owner', v_owner);
    perform tests.remember('stranger', v_stranger);
    perform tests.remember('admin_a', v_admin_a);
    perform tests.remember('admin_b', v_admin_b);
end
$$;

-- The plan of a query as jsonb (EXPLAIN (format json)), run as the current identity so RLS
-- policies are part of it; with p_analyze the query runs and nodes carry "Actual Rows". Search it
-- with jsonb_path_exists(plan, '$.** ? (@."Index Name" == "...")').
create or replace function tests.plan_of(p_query text, p_analyze boolean default false)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_plan json;
begin
    execute pg_catalog.format(
        'explain (format json%s) %s', case when p_analyze then ', analyze, timing off' else '' end, p_query
    ) into v_plan;
    return v_plan::jsonb;
end
$$;

-- pgTAP assertion: every table (plain or partitioned) in the schema has row level security on.
-- The failure diagnostics name the offending tables.
create or replace function tests.rls_enabled(p_schema text)
returns text
language sql
-- pgTAP's own functions call each other unqualified, so its schema must be on the path.
set search_path = extensions, pg_catalog
as $$
    select extensions.ok(
        pg_catalog.count(*) filter (where not c.relrowsecurity) = 0,
        pg_catalog.format('All tables in the %s schema should have row level security enabled', p_schema)
    ) || case
        when pg_catalog.count(*) filter (where not c.relrowsecurity) = 0 then ''
        else pg_catalog.chr(10) || extensions.diag(
            'Tables without row level security: '
            || pg_catalog.string_agg(c.relname::text, ', ' order by c.relname) filter (where not c.relrowsecurity)
        )
    end
    from pg_catalog.pg_class as c
    join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    where n.nspname = p_schema and c.relkind in ('r', 'p')
$$;

revoke all on all functions in schema tests from public;
grant execute on all functions in schema tests to anon, authenticated, service_role;

select plan(1);
select functions_are(
    'tests',
    array[
        'create_auth_user', 'authenticate_as', 'authenticate_as_service_role', 'authenticate_as_anon',
        'clear_authentication', 'remember', 'recall', 'create_cast', 'plan_of', 'rls_enabled'
    ],
    'the test helpers are installed, and no others'
);
select * from finish();
