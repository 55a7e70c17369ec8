-- anon (a client without a session) reaches nothing in the kit: no usage on either schema and no
-- privilege on any table, view, sequence or function in them, whether granted to anon itself or
-- to PUBLIC (which anon inherits).
begin;
select plan(8);

-- Schemas: no usage, no create.
select schema_privs_are('memory', 'anon', array[]::text[], 'anon has no privilege on schema memory');
select schema_privs_are('memory_private', 'anon', array[]::text[], 'anon has no privilege on schema memory_private');
select ok(
    not has_schema_privilege('anon', 'memory', 'usage') and not has_schema_privilege('anon', 'memory_private', 'usage'),
    'anon cannot use either schema (not even through PUBLIC)'
);

-- Tables and views: no table-level and no column-level privilege.
select is(
    array(
        select c.oid::regclass::text
        from pg_catalog.pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and c.relkind in ('r', 'p', 'v', 'm', 'f')
            and (
                has_table_privilege('anon', c.oid, 'select, insert, update, delete, truncate, references, trigger')
                or has_any_column_privilege('anon', c.oid, 'select, insert, update, references')
            )
        order by 1
    ),
    array[]::text[],
    'anon holds no privilege on any table or view in memory or memory_private'
);

-- Sequences (identity columns).
select is(
    array(
        select c.oid::regclass::text
        from pg_catalog.pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            -- (a case, so has_sequence_privilege never sees an index or table)
            and case when c.relkind = 'S' then has_sequence_privilege('anon', c.oid, 'usage, select, update') end
        order by 1
    ),
    array[]::text[],
    'anon holds no privilege on any sequence in memory or memory_private'
);

-- Functions and procedures: functions are executable by PUBLIC unless revoked, so this also
-- catches a missing `revoke execute ... from public`.
select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and has_function_privilege('anon', p.oid, 'execute')
        order by 1
    ),
    array[]::text[],
    'anon cannot execute any function or procedure in memory or memory_private'
);

-- The same, seen from the client: anon's Data API reads and RPC calls are refused.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.messages', '42501', null, 'anon cannot read memory.messages');
select throws_ok('select memory.count_messages(gen_random_uuid())', '42501', null, 'anon cannot call an RPC');

select * from finish();
rollback;
