-- Every foreign-key column and every column a policy filters on (user_id, tenant_id,
-- conversation_id, author_id, profile_id) is the first column of some index, so policies and
-- cascading deletes never scan a whole table (advisor lint 0001, unindexed_foreign_keys).
begin;
select plan(2);

with columns_needing_an_index as (
    -- Every column of every foreign key.
    select k.conrelid as relid, a.attnum
    from pg_catalog.pg_constraint as k
    cross join lateral unnest(k.conkey) as a (attnum)
    where k.contype = 'f'
        and k.connamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
    union
    -- The columns policies filter on, wherever a table with policies has them.
    select a.attrelid, a.attnum
    from pg_catalog.pg_attribute as a
    join pg_catalog.pg_class as c on c.oid = a.attrelid
    where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
        and c.relkind in ('r', 'p')
        and a.attname in ('user_id', 'tenant_id', 'conversation_id', 'author_id', 'profile_id')
        and not a.attisdropped
        and exists (select 1 from pg_catalog.pg_policy as p where p.polrelid = c.oid)
)
select is(
    array(
        select format('%s.%s', n.relid::regclass, a.attname)
        from columns_needing_an_index as n
        join pg_catalog.pg_attribute as a on a.attrelid = n.relid and a.attnum = n.attnum
        where not exists (
            select 1 from pg_catalog.pg_index as i
            where i.indrelid = n.relid and i.indkey[0] = n.attnum
        )
        order by 1
    ),
    array[]::text[],
    'every foreign-key column and policy filter column leads an index'
);

-- The kit's central filter columns are among the columns checked.
select cmp_ok(
    (select count(*)::integer from pg_catalog.pg_constraint
    where contype = 'f' and connamespace = 'memory'::regnamespace),
    '>=', 15,
    'the check covers the kit''s foreign keys (at least 15)'
);

select * from finish();
rollback;
