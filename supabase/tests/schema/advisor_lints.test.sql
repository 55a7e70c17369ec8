-- The kit ships clean under the checks of Supabase's database advisor, restated here over the
-- catalogs so `make test` (and `supabase test db`) fail on a regression: mutable search_path,
-- RLS initplans, several permissive policies for one action, tables without RLS, security definer
-- views and exposed security definer functions, extensions in public, duplicate indexes, tables
-- without a primary key, foreign keys without an index that starts with their columns.
-- A deliberate exception is listed with its reason, and the list is checked too, so it cannot
-- outlive the object it excuses.
begin;
select plan(12);

create temporary table allowed (lint text, object text, reason text) on commit drop;
insert into allowed values
(
    'function_search_path_mutable', 'memory_private.memory_score(numeric,numeric,timestamp with time zone,'
    || 'timestamp with time zone,integer,timestamp with time zone)',
    'an immutable SQL function inlined into select_memories (a SET clause would stop the inlining); it is not '
    || 'security definer, and inlined it is parsed under the caller''s empty search_path'
),
(
    'function_search_path_mutable', 'memory_private.bm25(double precision,double precision,double precision,'
    || 'double precision,double precision)',
    'an immutable SQL function inlined into lexical_messages and lexical_memories, once per candidate and term '
    || '(a SET clause would stop the inlining); not security definer, parsed under the caller''s empty search_path'
),
(
    'function_search_path_mutable', 'memory_private.nearness(double precision,double precision,double precision)',
    'an immutable SQL function inlined into both searches'' fusion and the selection''s lift, once per neighbour '
    || '(a SET clause would stop the inlining); not security definer, parsed under the caller''s empty search_path'
),
(
    'function_search_path_mutable', 'memory_private.prompt_text(text,integer)',
    'an immutable SQL function inlined into prompt_context and job_input once per text of a prompt (a SET '
    || 'clause would stop the inlining); not security definer, its standard SQL body bound when it was created'
),
(
    'function_search_path_mutable', 'memory_private.message_before(uuid,integer,text)',
    'a SQL function inlined into unembedded once per message (a SET clause would stop the inlining); not security '
    || 'definer, parsed under the caller''s empty search_path'
),
(
    'function_search_path_mutable', 'memory_private.message_after(uuid,integer,text,integer,text)',
    'a SQL function inlined into the embedding triggers once per changed message (a SET clause would stop the '
    || 'inlining); not security definer, parsed under the caller''s empty search_path'
),
(
    'function_search_path_mutable', 'memory_private.run_retention_sweep()',
    'a procedure that commits between batches cannot carry a SET clause; every name in it is schema-qualified'
),
(
    'function_search_path_mutable', 'memory_private.run_note_queue(text)',
    'a procedure that commits between batches cannot carry a SET clause; every name in it is schema-qualified'
),
(
    'function_search_path_mutable', 'memory_private.run_vector_list_builds()',
    'a procedure that commits between builds cannot carry a SET clause; every name in it is schema-qualified'
),
(
    'unindexed_foreign_keys', 'memory.messages.messages_conversation_id_user_id_fkey',
    'checked through the (conversation_id, turn_number) index: one conversation''s messages; a third index on '
    || 'the hottest table would cost every turn'
);

select is_empty(
    $$select a.object from allowed as a where a.lint = 'function_search_path_mutable' and not exists (
        select 1 from pg_proc as p where p.oid::regprocedure::text = a.object
            and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) as c where c like 'search_path=%')
    )$$,
    'every search_path exception names a function that still lacks one'
);
select is_empty(
    $$select p.oid::regprocedure::text from pg_proc as p
    where p.pronamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
        and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) as c where c like 'search_path=%')
        and p.oid::regprocedure::text not in (select a.object from allowed as a where a.lint = 'function_search_path_mutable')$$,
    'function_search_path_mutable: every other function sets its search_path'
);
select is_empty(
    $$select p.oid::regprocedure::text from pg_proc as p
    where p.pronamespace = 'memory'::regnamespace and p.prosecdef$$,
    'no security definer function in the exposed schema (they live in memory_private)'
);
select is_empty(
    $$select format('%s.%s: %s', p.schemaname, p.tablename, p.policyname) from pg_policies as p
    where p.schemaname in ('memory', 'memory_private')
        and regexp_replace(
            coalesce(p.qual, '') || ' ' || coalesce(p.with_check, ''),
            '\( SELECT (auth\.(uid|jwt|role)\(\)|current_setting\([^)]*\)) AS \w+\)', '', 'g'
        ) ~ '(auth\.(uid|jwt|role)\(\)|current_setting\()'$$,
    'auth_rls_initplan: policies call auth.uid() and friends once per statement, not per row'
);
select is_empty(
    $$select format('%s.%s %s %s', p.schemaname, p.tablename, r.role, c.action)
    from pg_policies as p
    cross join lateral unnest(p.roles) as r (role)
    cross join lateral unnest(case when p.cmd = 'ALL' then array['SELECT', 'INSERT', 'UPDATE', 'DELETE'] else array[p.cmd] end)
        as c (action)
    where p.schemaname in ('memory', 'memory_private') and p.permissive = 'PERMISSIVE'
    group by p.schemaname, p.tablename, r.role, c.action
    having count(*) > 1$$,
    'multiple_permissive_policies: one permissive policy per table, role and action'
);
select is_empty(
    $$select c.oid::regclass::text from pg_class as c
    where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
        and c.relkind in ('r', 'p') and not c.relrowsecurity$$,
    'rls_disabled: every table has row level security'
);
select is_empty(
    $$select c.oid::regclass::text from pg_class as c
    where c.relnamespace = 'memory'::regnamespace and c.relkind = 'v'
        and not coalesce('security_invoker=true' = any(c.reloptions), false)$$,
    'security_definer_view: every view runs as its caller'
);
select is_empty(
    $$select e.extname from pg_extension as e where e.extnamespace = 'public'::regnamespace$$,
    'extension_in_public: extensions live in the extensions schema'
);
select is_empty(
    $$select c.oid::regclass::text from pg_class as c
    where c.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace) and c.relkind in ('r', 'p')
        and not exists (select 1 from pg_constraint as k where k.conrelid = c.oid and k.contype = 'p')$$,
    'no_primary_key: every table has a primary key'
);
select is_empty(
    $$select i.indrelid::regclass::text from pg_index as i
    join pg_class as t on t.oid = i.indrelid
    where t.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
    group by i.indrelid, i.indkey::text, i.indclass::text, coalesce(pg_get_expr(i.indexprs, i.indrelid), ''),
        coalesce(pg_get_expr(i.indpred, i.indrelid), '')
    having count(*) > 1$$,
    'duplicate_index: no two identical indexes'
);
select is_empty(
    $$select a.object from allowed as a where a.lint = 'unindexed_foreign_keys' and not exists (
        select 1 from pg_constraint as k where k.contype = 'f'
            and format('%s.%s', k.conrelid::regclass, k.conname) = a.object
    )$$,
    'every foreign key exception names a foreign key that still exists'
);
select is_empty(
    $$select format('%s.%s', k.conrelid::regclass, k.conname) from pg_constraint as k
    join pg_class as t on t.oid = k.conrelid
    where k.contype = 'f' and t.relnamespace in ('memory'::regnamespace, 'memory_private'::regnamespace)
        and not exists (
            select 1 from pg_index as i
            where i.indrelid = k.conrelid
                and (i.indkey::int2 [])[0:cardinality(k.conkey) - 1] @> k.conkey
                and (i.indkey::int2 [])[0:cardinality(k.conkey) - 1] <@ k.conkey
        )
        and format('%s.%s', k.conrelid::regclass, k.conname)
        not in (select a.object from allowed as a where a.lint = 'unindexed_foreign_keys')$$,
    'unindexed_foreign_keys: every other foreign key has an index that starts with its columns'
);

select * from finish();
rollback;
