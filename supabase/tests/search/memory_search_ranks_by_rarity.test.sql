-- memory.search_memories ranks keyword matches by BM25 (a rare word outranks a common one), then
-- typo matches; a missing status and a query over 1,000 characters are refused (22023), so no
-- call returns deleted memories by accident or compares a huge text with every memory.
begin;
select plan(5);

select tests.create_cast('search-memories-bm25');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.remember(format('Drinks coffee with friend %s', i), 'fact') from generate_series(1, 12) as i;
select tests.remember('rare', (select memory_id from memory.remember('Owns a vintage zeppelin poster', 'fact')));
select tests.remember('both', (select memory_id from memory.remember('Coffee mug with a zeppelin', 'fact')));
select tests.remember('gone', (select memory_id from memory.remember('Zeppelin tour booked', 'fact')));
select memory.forget(tests.recall('gone')::uuid);

select results_eq(
    $$select id from memory.search_memories('coffee zeppelin') limit 2$$,
    $$values (tests.recall('both')::uuid), (tests.recall('rare')::uuid)$$,
    'both words first, then the rare one, before the twelve with the common one'
);
select set_eq(
    $$select id from memory.search_memories('zepelin')$$,
    $$values (tests.recall('both')::uuid), (tests.recall('rare')::uuid)$$,
    'a misspelt word still finds the live memories that hold it (typo fallback)'
);
select throws_ok(
    $$select * from memory.search_memories('zeppelin', p_status => null)$$,
    '22023', null, 'a missing status is refused, not read as every memory'
);
select throws_ok(
    $$select * from memory.search_memories(repeat('zeppelin ', 112))$$,
    '22023', 'a memory search is at most 1,000 characters', 'an oversized query is refused'
);
select is_empty(
    $$select id from memory.search_memories('zeppelin tour') where id = tests.recall('gone')::uuid$$,
    'a deleted memory is not among the active ones'
);

select * from finish();
rollback;
