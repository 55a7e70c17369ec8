-- Every table has a primary key (advisor lint 0004): replication, the Data API's updates and
-- deletes by key, and Citus distribution all need one.
begin;
select plan(2);

select is(
    array(
        select c.oid::regclass::text
        from pg_catalog.pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and c.relkind in ('r', 'p')
            and not exists (
                select 1 from pg_catalog.pg_constraint as k where k.conrelid = c.oid and k.contype = 'p'
            )
        order by 1
    ),
    array[]::text[],
    'every table in memory and memory_private has a primary key'
);

select cmp_ok(
    (select count(*)::integer from pg_catalog.pg_class
    where relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace) and relkind in ('r', 'p')),
    '>=', 12,
    'the check covers the kit''s tables (at least 12)'
);

select * from finish();
rollback;
