-- Memory selection scores with inlined arithmetic and gives the answer scoring everything would.
-- (The plans of the hot reads' own statements, history and the turn window, are checked inside
-- their functions by tests/test_function_plans.py, through auto_explain.)
begin;
select plan(3);

select tests.create_cast('plans');

-- Memory selection scores each live memory with inlined arithmetic and lifts only the memories the
-- query's retrieval finds. 200 live memories on the owner's primary profile: ten goals of
-- confidence 1 (static score 1.5) and 190 facts of confidence 0.1 (0.1). seed 004's score is
-- inlined (memory_score is never called as a function); counting the calls needs track_functions,
-- which only a superuser may set (a hosted project's postgres is not one), so
-- tests/test_selection_calls.py counts them; here the catalog shows that memory_score keeps what
-- inlining needs.
select tests.clear_authentication();
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
insert into memory.memories (user_id, content, type, confidence)
select tests.recall('owner')::uuid,
    case when i <= 10 then format('Training goal %s for the marathon', i) else format('Fact %s about the garden', i) end,
    case when i <= 10 then 'goal' else 'fact' end,
    case when i <= 10 then 1.0 else 0.1 end
from generate_series(1, 200) as i;
analyze memory.memories;
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('chosen', (
    select array_agg(s.content order by s.content)
    from memory.select_memories(p_query => 'how is my marathon training going') as s
));
select tests.clear_authentication();

select is(
    tests.recall('chosen'),
    (select array_agg(format('Training goal %s for the marathon', i) order by format('Training goal %s for the marathon', i))
    from generate_series(1, 10) as i)::text,
    'selection with a query: the ten goals'
);
select results_eq(
    $$select p.prolang = (select l.oid from pg_catalog.pg_language as l where l.lanname = 'sql'), p.prosecdef,
        p.proconfig is null, p.provolatile <> 'v', p.proretset
    from pg_catalog.pg_proc as p where p.oid = 'memory_private.memory_score'::regproc$$,
    $$values (true, false, true, true, false)$$,
    'selection: memory_score is a plain SQL function without settings, so the planner inlines it'
);

-- The result is the one scoring every memory gives: its static score lifted by its relevance.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select s.id, s.score from memory.select_memories(p_query => 'fact about the garden', p_limit => 50) as s$$,
    $$select m.id, round(memory_private.memory_score(t.weight, m.confidence, m.last_referenced_at, m.created_at,
        m.reference_count, now()) * (1 + coalesce(l.relevance, 0)::numeric), 4) as score
    from memory.memories as m join memory.memory_types as t on t.type = m.type
    left join memory_private.lexical_memories(tests.recall('owner')::uuid, 'fact about the garden', null, (
        select p.id from memory.profiles as p where p.user_id = tests.recall('owner')::uuid and p.is_primary
    )) as l
        on l.memory_id = m.id
    where m.user_id = tests.recall('owner')::uuid
    order by m.pinned desc, 2 desc, m.id
    limit 50$$,
    'selection with a query matching the low-scored memories: the same ids and scores as scoring all of them'
);

select * from finish();
rollback;
