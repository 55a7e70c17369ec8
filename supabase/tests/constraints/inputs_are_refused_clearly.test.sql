-- Inputs that failed with an internal error, or were stored wrong, are refused with 22023 and a
-- message that says what is wrong: an external user id past 255 characters (its index entry
-- overflowed: 54000, which a client reads as a limit to retry later), a query embedding too long
-- for the half precision vectors are searched in (a cast error), a null used memory id, and used
-- memories on a question (seed 004's metrics counted it as an answer that used memories), and a
-- memory's unknown type, confidence outside 0..1 or category past 100 characters.
begin;
select plan(13);

select tests.create_cast('clear-input');
select throws_ok(format($$select memory.user_id_for(%L)$$, repeat('x', 256)), '22023',
    'external user id must be at most 255 characters', 'an external id of 256 characters is refused');
select lives_ok(format($$select memory.user_id_for(%L)$$, repeat('x', 255)), 'one of 255 is taken');

select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid)).id);
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    format($$select memory.add_turn(%L, 'Hi', 'Hello', p_used_memory_ids => array[null]::uuid[])$$, tests.recall('conv')),
    '22023', 'a used memory id must not be null', 'a null used memory id is refused'
);
select throws_ok(
    format($$select memory.add_message(%L, 'user', 'Hi', p_used_memory_ids => array[gen_random_uuid()])$$,
        tests.recall('conv')),
    '22023', 'only an answer uses memories', 'so are memories used by a question'
);
select is(
    (select count(*) from memory.messages where conversation_id = tests.recall('conv')::uuid), 0::bigint,
    'nothing was written'
);
select throws_ok(
    $$select * from memory.search_messages('tea', p_query_embedding =>
        (array_fill(0::real, array[383]) || 70000::real)::extensions.vector)$$,
    '22023', 'the query embedding is longer than 65,504: its values do not fit half precision',
    'a query embedding too long for half precision is refused'
);
select lives_ok(
    $$select * from memory.search_messages('tea', p_query_embedding =>
        (array_fill(0::real, array[383]) || 1::real)::extensions.vector)$$,
    'a unit one is searched'
);
-- A memory's type, category and confidence: the table's refusals named only a constraint.
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true)
    returning id)
select tests.remember('profile', id) from p;
select throws_ok($$select memory.remember('Likes tea', 'bogus')$$, '22023', 'unknown memory type ''bogus''',
    'an unknown memory type is refused, named');
select throws_ok($$select memory.remember('Likes tea', 'fact', p_confidence => 1.5)$$, '22023',
    'confidence must be between 0 and 1', 'a confidence above 1');
select throws_ok($$select memory.remember('Likes tea', 'fact', p_confidence => 'NaN')$$, '22023',
    'confidence must be between 0 and 1', 'or one that is not a number');
select throws_ok(format($$select memory.remember('Likes tea', 'fact', p_category => %L)$$, repeat('x', 101)), '22023',
    'a category is at most 100 characters', 'a category of 101 characters');
select tests.remember('tea', (select memory_id from memory.remember('Likes tea', 'preference', p_category => '  ')));
select is((select category from memory.memories where id = tests.recall('tea')::uuid), null, 'a blank category is none');
select throws_ok(format($$select memory.revise_memory(%L, 'Likes green tea', 'bogus')$$, tests.recall('tea')), '22023',
    'unknown memory type ''bogus''', 'a revision checks them too');
select tests.clear_authentication();

select * from finish();
rollback;
