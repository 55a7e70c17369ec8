-- Memory selection scores what can be chosen and gives the answer scoring everything would.
-- (The plans of the hot reads' own statements, history and the turn window, are checked inside
-- their functions by tests/test_function_plans.py, through auto_explain.)
begin;
select plan(4);

select tests.create_cast('plans');

-- Memory selection does work in proportion to what can be chosen. 200 live memories on the
-- owner's primary profile: ten goals of confidence 1 (static score 1.5) and 190 facts of
-- confidence 0.1 (0.1). seed 004's score is inlined (memory_score is never called as a function),
-- and the query's lift (word_similarity, the costly part) is computed only for memories that can
-- reach the top ten: a fact's score lifted at most twofold (0.2) stays under the tenth goal's 1.5.
-- Counting the calls needs track_functions, which only a superuser may set (a hosted project's
-- postgres is not one), so tests/test_memory_plans.py counts them; here the catalog shows that
-- memory_score keeps what inlining needs.
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

-- The result is the one scoring every memory gives (the same formula and lift over all 200).
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select s.id, s.score from memory.select_memories(p_query => 'fact about the garden', p_limit => 50) as s$$,
    $$select m.id, round(memory_private.memory_score(t.weight, m.confidence, m.last_referenced_at, m.created_at,
        m.reference_count, now()) * (1 + greatest(
            ts_rank_cd(m.search, websearch_to_tsquery('english', 'fact about the garden'))::numeric,
            extensions.word_similarity('fact about the garden', m.content)::numeric)), 4) as score
    from memory.memories as m join memory.memory_types as t on t.type = m.type
    where m.user_id = tests.recall('owner')::uuid
    order by m.pinned desc, 2 desc, m.id
    limit 50$$,
    'selection with a query matching the low-scored memories: the same ids and scores as scoring all of them'
);
select results_eq(
    $$select s.id, s.score from memory.select_memories(p_query => 'garden -marathon', p_limit => 12) as s$$,
    $$select m.id, round(memory_private.memory_score(t.weight, m.confidence, m.last_referenced_at, m.created_at,
        m.reference_count, now()) * (1 + greatest(
            ts_rank_cd(m.search, websearch_to_tsquery('english', 'garden -marathon'))::numeric,
            extensions.word_similarity('garden -marathon', m.content)::numeric)), 4) as score
    from memory.memories as m join memory.memory_types as t on t.type = m.type
    where m.user_id = tests.recall('owner')::uuid
    order by m.pinned desc, 2 desc, m.id
    limit 12$$,
    'selection with a negated word (no bound): the same ids and scores as scoring all of them'
);

select * from finish();
rollback;
