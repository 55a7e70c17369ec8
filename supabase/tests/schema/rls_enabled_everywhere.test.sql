-- Every table in the kit's schemas has row level security on, so a table added without policies
-- is closed instead of open (deny by default).
begin;
select plan(3);

select tests.rls_enabled('memory');
select tests.rls_enabled('memory_private');

-- The check above must see the tables it claims to check: an empty schema would pass vacuously.
select cmp_ok(
    (select count(*)::integer from pg_catalog.pg_class
    where relnamespace = 'memory'::regnamespace and relkind in ('r', 'p')),
    '>=', 11,
    'the memory schema holds the kit''s tables (at least 11)'
);

select * from finish();
rollback;
