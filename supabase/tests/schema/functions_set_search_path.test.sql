-- Every function in memory and memory_private pins its search_path, so no caller can redirect
-- an unqualified name to an object of their own (advisor lint 0011, function_search_path_mutable).
-- Security definer functions pin it to '' and qualify every name.
begin;
select plan(4);

select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and p.prokind in ('f', 'a', 'w')
            and not exists (select 1 from unnest(p.proconfig) as c where c like 'search_path=%')
        order by 1
    ),
    array[]::text[],
    'every function in memory and memory_private sets search_path'
);

select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and p.prosecdef
            and not ('search_path=""' = any(coalesce(p.proconfig, '{}')))
        order by 1
    ),
    array[]::text[],
    'every security definer function sets search_path to the empty string'
);

-- A procedure that commits between batches cannot carry a SET clause (Postgres refuses the
-- commit), so it qualifies every name instead. Only the procedures listed here may do that; a new
-- one must be added deliberately.
select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and p.prokind = 'p'
            and not exists (select 1 from unnest(p.proconfig) as c where c like 'search_path=%')
        order by 1
    ),
    array['memory_private.run_retention_sweep()'],
    'only the committing retention procedure goes without a search_path'
);

select cmp_ok(
    (select count(*)::integer from pg_catalog.pg_proc
    where pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace) and prokind = 'f'),
    '>=', 30,
    'the check covers the kit''s functions (at least 30)'
);

select * from finish();
rollback;
