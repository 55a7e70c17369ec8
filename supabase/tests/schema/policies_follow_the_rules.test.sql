-- Policies follow Supabase's advisor lints:
-- * auth.uid() and the private helpers are wrapped in a scalar subquery, `(select auth.uid())`,
--   so they run once per statement as an initPlan, not once per row (lint 0003, auth_rls_initplan);
-- * at most one permissive policy per table, role and command (lint 0006);
-- * no write policy is `using (true)` or `with check (true)` (lint 0024);
-- * policies are `to` a named role, never to PUBLIC.
begin;
select plan(5);

-- Policy expressions print a wrapped call as `( SELECT auth.uid() AS uid)`; remove those and no
-- bare call may remain.
select is(
    array(
        select format('%s: %s', p.tablename, p.policyname)
        from pg_catalog.pg_policies as p
        where p.schemaname in ('memory', 'memory_private')
            and regexp_replace(
                coalesce(p.qual, '') || ' ' || coalesce(p.with_check, ''),
                '\( SELECT (auth\.uid|auth\.jwt|auth\.role|memory_private\.[a-z_]+)\(\) AS [a-z_]+\)', '', 'g'
            ) ~ '(auth\.(uid|jwt|role)|memory_private\.[a-z_]+)\('
        order by 1
    ),
    array[]::text[],
    'policies call auth.uid() and the private helpers only as (select ...)'
);

select is(
    array(
        select format('%s %s %s (%s policies)', x.tablename, x.role, x.cmd, x.n)
        from (
            select p.tablename, r.role, c.cmd, count(*) as n
            from pg_catalog.pg_policies as p
            cross join lateral unnest(p.roles) as r (role)
            cross join lateral unnest(
                case when p.cmd = 'ALL' then array['SELECT', 'INSERT', 'UPDATE', 'DELETE'] else array[p.cmd] end
            ) as c (cmd)
            where p.schemaname in ('memory', 'memory_private') and p.permissive = 'PERMISSIVE'
            group by p.tablename, r.role, c.cmd
            having count(*) > 1
        ) as x
        order by 1
    ),
    array[]::text[],
    'at most one permissive policy per table, role and command'
);

select is(
    array(
        select format('%s: %s', p.tablename, p.policyname)
        from pg_catalog.pg_policies as p
        where p.schemaname in ('memory', 'memory_private')
            and p.cmd in ('INSERT', 'UPDATE', 'DELETE', 'ALL')
            and (p.qual = 'true' or p.with_check = 'true')
        order by 1
    ),
    array[]::text[],
    'no write policy is using (true) or with check (true)'
);

select is(
    array(
        select format('%s: %s', p.tablename, p.policyname)
        from pg_catalog.pg_policies as p
        where p.schemaname in ('memory', 'memory_private') and 'public' = any(p.roles)
        order by 1
    ),
    array[]::text[],
    'every policy names its role (none applies to PUBLIC)'
);

-- The rules above must have policies to look at.
select cmp_ok(
    (select count(*)::integer from pg_catalog.pg_policies where schemaname = 'memory'),
    '>=', 30,
    'the memory schema has its policies (at least 30)'
);

select * from finish();
rollback;
