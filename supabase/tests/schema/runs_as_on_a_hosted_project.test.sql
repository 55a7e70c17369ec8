-- The database these tests run in is shaped like a hosted Supabase project (locally:
-- scripts/bootstrap.sql), so a migration or a test that needs more than a project allows fails
-- here first: postgres is not a superuser, GoTrue's auth schema is not postgres' to change, and
-- the API roles carry the platform's statement timeouts.
begin;
select plan(12);

select is(
    (select rolsuper from pg_catalog.pg_roles where rolname = current_user), false,
    'the tests run as a role that is not a superuser'
);
select is(current_user::text, 'postgres', 'they run as postgres, like `supabase test db`');
select ok(
    (select rolbypassrls and rolcreaterole from pg_catalog.pg_roles where rolname = 'postgres'),
    'postgres bypasses RLS and creates roles, as on the platform'
);
select ok(
    pg_catalog.pg_has_role('postgres', 'authenticated', 'member')
    and pg_catalog.pg_has_role('postgres', 'anon', 'member')
    and pg_catalog.pg_has_role('postgres', 'service_role', 'member'),
    'postgres may act as each API role'
);
select is(
    (select array_agg(c order by c) from pg_catalog.pg_db_role_setting as s
        cross join unnest(s.setconfig) as c
        where s.setrole = 'anon'::regrole and c like 'statement_timeout=%'),
    array['statement_timeout=3s'],
    'anon''s statements time out after 3 s'
);
select is(
    (select array_agg(c order by c) from pg_catalog.pg_db_role_setting as s
        cross join unnest(s.setconfig) as c
        where s.setrole = 'authenticated'::regrole and c like 'statement_timeout=%'),
    array['statement_timeout=8s'],
    'a signed-in user''s statements time out after 8 s'
);
select is(
    pg_catalog.pg_get_userbyid((select relowner from pg_catalog.pg_class where oid = 'auth.users'::regclass))::text,
    'supabase_auth_admin',
    'auth.users belongs to GoTrue''s admin role'
);
select ok(
    (select relrowsecurity from pg_catalog.pg_class where oid = 'auth.users'::regclass),
    'auth.users has row level security on'
);
select ok(
    not has_table_privilege('service_role', 'auth.users', 'select'),
    'service_role has no grant on auth.users'
);
select is(
    (select proconfig from pg_catalog.pg_proc where oid = 'auth.uid()'::regprocedure),
    null,
    'auth.uid() has no search_path setting of its own'
);
select ok(
    not has_schema_privilege('postgres', 'auth', 'create'),
    'postgres cannot create objects in auth'
);
select throws_ok(
    'set session_replication_role = replica',
    '42501',
    null,
    'a superuser-only setting is refused'
);

select * from finish();
rollback;
