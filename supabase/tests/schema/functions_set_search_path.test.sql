-- Every function in memory and memory_private pins its search_path, so no caller can redirect
-- an unqualified name to an object of their own (advisor lint 0011, function_search_path_mutable).
-- Security definer functions pin it to '' and qualify every name.
--
-- Six exemptions: memory_private.memory_score, seed 004's score formula, memory_private.bm25,
-- one term's BM25 weight, memory_private.nearness, a neighbour's place among its list, and
-- memory_private.prompt_text, a long text's beginning, go without a SET clause so that Postgres can
-- inline them into the queries that rank memories and messages or build prompts (a function with a
-- SET clause is never inlined; 20261123000500 and 20261125020000 say why that matters). They are
-- safe: plain arithmetic or pg_catalog's text functions on their arguments, naming no table or
-- function of their own, invoker's rights, immutable, and inlined into callers that pin
-- search_path themselves. memory_private.message_before and
-- message_after, a conversation's neighbouring messages, are inlined into the embedding triggers
-- and unembedded once per row for the same reason: one schema-qualified select, invoker's rights,
-- stable, executable by the service role alone. The checks below hold them to those shapes.
begin;
select plan(7);

select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and p.prokind in ('f', 'a', 'w')
            and not exists (select 1 from unnest(p.proconfig) as c where c like 'search_path=%')
            and p.oid <> 'memory_private.memory_score(numeric, numeric, timestamptz, timestamptz, integer, timestamptz)'::regprocedure
            and p.oid <> 'memory_private.bm25(float8, float8, float8, float8, float8)'::regprocedure
            and p.oid <> 'memory_private.nearness(float8, float8, float8)'::regprocedure
            and p.oid <> 'memory_private.prompt_text(text, integer)'::regprocedure
            and p.oid <> 'memory_private.message_before(uuid, integer, text)'::regprocedure
            and p.oid <> 'memory_private.message_after(uuid, integer, text, integer, text)'::regprocedure
        order by 1
    ),
    array[]::text[],
    'every function in memory and memory_private sets search_path (the six exemptions aside, below)'
);

select results_eq(
    $$select p.proname, l.lanname, p.prosecdef, p.provolatile, p.proconfig is null
    from pg_catalog.pg_proc as p join pg_catalog.pg_language as l on l.oid = p.prolang
    where p.oid in (
        'memory_private.memory_score(numeric, numeric, timestamptz, timestamptz, integer, timestamptz)'::regprocedure,
        'memory_private.bm25(float8, float8, float8, float8, float8)'::regprocedure,
        'memory_private.nearness(float8, float8, float8)'::regprocedure,
        'memory_private.prompt_text(text, integer)'::regprocedure
    )
    order by 1$$,
    $$values ('bm25'::name, 'sql'::name, false, 'i'::"char", true), ('memory_score', 'sql', false, 'i', true),
        ('nearness', 'sql', false, 'i', true), ('prompt_text', 'sql', false, 'i', true)$$,
    'the four formulas: SQL, invoker''s rights, immutable, no SET clause'
);

select results_eq(
    $$select p.proname, l.lanname, p.prosecdef, p.provolatile, p.proconfig is null,
        has_function_privilege('authenticated', p.oid, 'execute'), has_function_privilege('anon', p.oid, 'execute')
    from pg_catalog.pg_proc as p join pg_catalog.pg_language as l on l.oid = p.prolang
    where p.oid in (
        'memory_private.message_before(uuid, integer, text)'::regprocedure,
        'memory_private.message_after(uuid, integer, text, integer, text)'::regprocedure
    )
    order by 1$$,
    $$values ('message_after'::name, 'sql'::name, false, 's'::"char", true, false, false),
        ('message_before', 'sql', false, 's', true, false, false)$$,
    'the two neighbours: SQL, invoker''s rights, stable, no SET clause, not executable by users'
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
    array[
        'memory_private.run_note_queue(text)', 'memory_private.run_retention_sweep()',
        'memory_private.run_vector_list_builds()'
    ],
    'only the committing retention, note-queue and vector-list procedures go without a search_path'
);

-- A SET clause keeps Postgres from inlining an SQL function, and an SQL function that is not
-- inlined is planned again on every call (Postgres 15): about 50-90 µs for a one-line wrapper,
-- paid by every RPC. plpgsql keeps its plans for the session, so a function that pins its
-- search_path is written in plpgsql.
select is(
    array(
        select p.oid::regprocedure::text
        from pg_catalog.pg_proc as p
        where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
            and p.prolang = (select l.oid from pg_catalog.pg_language as l where l.lanname = 'sql')
            and p.proconfig is not null
        order by 1
    ),
    array[]::text[],
    'no SQL function carries a SET clause: it would be planned on every call'
);

select cmp_ok(
    (select count(*)::integer from pg_catalog.pg_proc
    where pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace) and prokind = 'f'),
    '>=', 30,
    'the check covers the kit''s functions (at least 30)'
);

select * from finish();
rollback;
