-- Deny by default for functions: nothing in memory or memory_private is executable by PUBLIC
-- (a function's default ACL), so each role executes only what a migration granted it by name.
-- Service-only functions (sweeps, the external-id mapping, schedules) stay out of reach of
-- signed-in users.
begin;
select plan(3);

-- A null proacl means the default ACL, which includes EXECUTE for PUBLIC.
select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and (
                p.proacl is null
                or exists (select 1 from aclexplode(p.proacl) as a where a.grantee = 0 and a.privilege_type = 'EXECUTE')
            )
        order by 1
    ),
    array[]::text[],
    'no function in memory or memory_private is executable by PUBLIC'
);

-- authenticated executes exactly the functions granted to it by name.
select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and has_function_privilege('authenticated', p.oid, 'execute')
            and not exists (
                select 1 from aclexplode(p.proacl) as a
                where a.grantee = 'authenticated'::regrole and a.privilege_type = 'EXECUTE'
            )
        order by 1
    ),
    array[]::text[],
    'authenticated executes no function that was not granted to it by name'
);

-- The service-only functions by name, so the rule above is seen to matter.
select is(
    array(
        select f
        from unnest(array[
            'memory.sweep_expired(integer,uuid,jsonb)',
            'memory.user_id_for(text,uuid)',
            'memory_private.schedule_jobs()',
            'memory_private.run_retention_sweep()',
            'memory_private.run_note_queue(text)',
            'memory_private.run_vector_list_builds()',
            'memory_private.build_vector_lists(uuid,text)'
        ]) as f
        where has_function_privilege('authenticated', f::regprocedure, 'execute')
    ),
    array[]::text[],
    'authenticated cannot execute sweep_expired, user_id_for, schedule_jobs, run_retention_sweep, the note queues '
    || 'or the vector-list builds'
);

select * from finish();
rollback;
