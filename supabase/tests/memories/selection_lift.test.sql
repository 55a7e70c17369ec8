-- The query's lift in memory selection: a memory's static score is multiplied by one plus its
-- relevance, the share of the query's terms it holds weighted by rarity (BM25 over the profile's live
-- memories, against a memory holding every term once at the average length). Four facts of the
-- same static score (0.8) and the same length (three lexemes) make the shares exact. With a query
-- embedding the lift averages relevance with nearness among the nearest memories, scaled from the
-- farthest of them (0) to the nearest (1), whatever the model's range of cosines.
begin;
select plan(12);

select tests.create_cast('selection-lift');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
insert into memory.memories (user_id, content, type, confidence) values
(tests.recall('owner')::uuid, 'marathon training plan', 'fact', 0.8),
(tests.recall('owner')::uuid, 'weekly training plan', 'fact', 0.8),
(tests.recall('owner')::uuid, 'garden watering plan', 'fact', 0.8),
(tests.recall('owner')::uuid, 'birthday party guests', 'fact', 0.8);

select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('plan', (
    select jsonb_agg(jsonb_build_array(s.content, s.score) order by s.score desc, s.content)
    from memory.select_memories(p_query => 'my marathon plan') as s
));
select is(
    tests.recall('plan')::jsonb -> 0, '["marathon training plan", 1.6000]'::jsonb,
    'a memory holding every term of the query is lifted twofold'
);
select is(
    tests.recall('plan')::jsonb -> 3, '["birthday party guests", 0.8000]'::jsonb,
    'a memory holding none keeps its static score'
);
select ok(
    (tests.recall('plan')::jsonb -> 1 -> 1) = (tests.recall('plan')::jsonb -> 2 -> 1)
    and (tests.recall('plan')::jsonb -> 1 ->> 1)::numeric between 0.81 and 1.2,
    'memories holding only the common term are lifted alike, by less than its share of the query'
);
select is(
    (select s.content from memory.select_memories(p_query => 'training in the garden', p_limit => 1) as s),
    'garden watering plan',
    'the rare term (one memory holds it) outranks the common one (two hold it)'
);
select ok(
    (select s.score from memory.select_memories(p_query => 'marathon xylophone') as s
    where s.content = 'marathon training plan') between 0.9 and 1.5,
    'a term no memory holds counts in the query: the marathon memory covers part of it'
);
select results_eq(
    $$select s.score from memory.select_memories(p_query => 'the and, of!') as s$$,
    $$values (0.8000), (0.8000), (0.8000), (0.8000)$$,
    'a query without a term lifts nothing'
);

-- Another user's memories never enter the owner's term statistics.
select tests.clear_authentication();
insert into memory.memories (user_id, content, type, confidence)
select tests.recall('stranger')::uuid, format('plan %s for the marathon', i), 'fact', 0.8 from generate_series(1, 20) as i;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select jsonb_agg(jsonb_build_array(s.content, s.score) order by s.score desc, s.content)
    from memory.select_memories(p_query => 'my marathon plan') as s),
    tests.recall('plan')::jsonb,
    'another user''s memories holding the same terms change nothing'
);

-- Rarity is counted among the memories selection chooses from: the profile's live ones.
select tests.clear_authentication();
with p as (insert into memory.profiles (user_id, name) values (tests.recall('owner')::uuid, 'Partner') returning id)
insert into memory.memories (user_id, profile_id, content, type, confidence)
select tests.recall('owner')::uuid, p.id, format('their marathon number %s', i), 'fact', 0.8
from p cross join generate_series(1, 20) as i;
insert into memory.memories (user_id, profile_id, content, type, confidence, archived)
select tests.recall('owner')::uuid, tests.recall('p')::uuid, format('an old marathon %s', i), 'fact', 0.8, true
from generate_series(1, 20) as i;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select jsonb_agg(jsonb_build_array(s.content, s.score) order by s.score desc, s.content)
    from memory.select_memories(p_query => 'my marathon plan') as s),
    tests.recall('plan')::jsonb,
    'the owner''s archived memories and another profile''s, holding the same terms, change nothing'
);

-- Vectors in a narrow cone, as a real model's nearest are (cosines from 0.96 to 1).
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-3d', 3);
select tests.clear_authentication();
insert into memory_private.memory_embeddings (memory_id, user_id, model, embedding)
select m.id, m.user_id, 'test-3d', v.embedding::extensions.vector
from memory.memories as m
join (values
    ('birthday party guests', '[1, 0, 0]'), ('marathon training plan', '[1, 0.1, 0]'),
    ('garden watering plan', '[1, 0.2, 0]'), ('weekly training plan', '[1, 0.3, 0]')
) as v (content, embedding) on v.content = m.content
where m.user_id = tests.recall('owner')::uuid and m.profile_id = tests.recall('p')::uuid and not m.archived;
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('near', (
    select jsonb_object_agg(s.content, s.score)
    from memory.select_memories(p_query_embedding => '[1, 0, 0]') as s
));
select ok(
    (tests.recall('near')::jsonb ->> 'birthday party guests')::numeric = 1.6
    and (tests.recall('near')::jsonb ->> 'weekly training plan')::numeric = 0.8,
    'with the embedding alone the nearest is lifted twofold and the farthest of the nearest not at all'
);
select tests.remember('both', (
    select jsonb_agg(jsonb_build_array(s.content, s.score) order by s.score desc, s.content)
    from memory.select_memories(p_query => 'my marathon plan', p_query_embedding => '[1, 0, 0]') as s
));
select is(
    tests.recall('both')::jsonb -> 0 ->> 0, 'marathon training plan',
    'a memory both sides find near the top comes first'
);
select is(
    tests.recall('both')::jsonb -> 1, '["birthday party guests", 1.2000]'::jsonb,
    'the nearest memory without the query''s words gets half the lift: the sides are averaged'
);

select is(
    (select s.score from memory.select_memories(p_query => 'what about it?', p_query_embedding => '[1, 0, 0]') as s
    where s.content = 'birthday party guests'),
    1.6000,
    'a text of stop words has no lexical side: the embedding''s lift stays whole'
);

select * from finish();
rollback;
