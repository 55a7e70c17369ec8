-- Security definer bypasses RLS, so it lives only in the never-exposed memory_private schema;
-- every RPC in the exposed memory schema runs as its caller and RLS decides what it reaches
-- (advisor lint 0028/0029). Views run as their caller too (security_invoker, lint 0010).
begin;
select plan(3);

select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace = 'memory'::regnamespace and p.prosecdef
        order by 1
    ),
    array[]::text[],
    'no function in the exposed memory schema is security definer'
);

select is(
    array(
        select c.oid::regclass::text
        from pg_catalog.pg_class as c
        where c.relnamespace = 'memory'::regnamespace
            and c.relkind in ('v', 'm')
            and not coalesce('security_invoker=true' = any(c.reloptions), false)
        order by 1
    ),
    array[]::text[],
    'every view in memory is security_invoker'
);

-- Nothing in the kit's schemas is owned by a role that bypasses RLS other than the migrating
-- superuser: views and functions owned by e.g. service_role would run with its bypassrls.
select is(
    array(
        select c.oid::regclass::text
        from pg_catalog.pg_class as c
        join pg_catalog.pg_roles as r on r.oid = c.relowner
        where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and r.rolname in ('service_role', 'authenticated', 'anon')
        order by 1
    ),
    array[]::text[],
    'no relation in memory or memory_private is owned by an API role'
);

select * from finish();
rollback;
