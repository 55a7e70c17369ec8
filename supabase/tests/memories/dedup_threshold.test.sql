-- memory.remember deduplicates on write (seed 004): a new memory whose trigram similarity to a live
-- memory of the same user and profile is at or above dedup_threshold (0.85) is not stored again;
-- the existing one gets one more reference and keeps the higher confidence. Just below the edge it
-- is a new memory. Archived, deleted and superseded memories absorb nothing, other users and other
-- profiles are separate, and the edge moves with memory_private.settings 'dedup_threshold'.
begin;
select plan(23);

select tests.remember('u', tests.create_auth_user('memories-dedup.u@supamem.test'));
select memory.register_user(tests.recall('u')::uuid);
select tests.remember('v', memory.user_id_for('memories-dedup.v'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'U main', true) returning id)
select tests.remember('pu', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'U work', false) returning id)
select tests.remember('pq', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('v')::uuid, 'V main', true) returning id)
select tests.remember('pv', id) from p;

-- The strings on both sides of the edge, measured the way remember measures them. (similarity is
-- a real: 17/20 is the real nearest 0.85, which compares as at-or-above the numeric setting.)
select is(
    extensions.similarity('I drink tea daily', 'I drink tea daily, ok'), 0.85::real,
    'the edge pair is exactly at 0.85 (17 shared of 20 trigrams)'
);
select is(
    round(extensions.similarity('I prefer green tea in the morning', 'I prefer green tea in a morning')::numeric, 4),
    0.8529,
    'the pair above the edge is at 0.8529'
);
select is(
    round(extensions.similarity('I prefer green tea in the morning', 'I prefer green tea in the morn')::numeric, 4),
    0.8485,
    'the pair below the edge is at 0.8485'
);

select tests.authenticate_as_service_role();

-- Exact repeat and the 0.85 edge are duplicates; the higher confidence wins.
select results_eq(
    $$select outcome from memory.remember('I drink tea daily', 'preference', tests.recall('u')::uuid, p_confidence => 0.7)$$,
    $$values ('added')$$,
    'a first memory is added'
);
select tests.remember('tea', (select id from memory.memories where user_id = tests.recall('u')::uuid and content = 'I drink tea daily'));
select results_eq(
    $$select memory_id, outcome from memory.remember('I drink tea daily', 'preference', tests.recall('u')::uuid, p_confidence => 0.95)$$,
    $$values (tests.recall('tea')::uuid, 'duplicate')$$,
    'an exact repeat is a duplicate of the first'
);
select results_eq(
    $$select memory_id, outcome from memory.remember('I drink tea daily, ok', 'preference', tests.recall('u')::uuid, p_confidence => 0.6)$$,
    $$values (tests.recall('tea')::uuid, 'duplicate')$$,
    'a near-duplicate exactly at the 0.85 threshold is a duplicate'
);
select results_eq(
    $$select reference_count, confidence, last_referenced_at = now() from memory.memories where id = tests.recall('tea')::uuid$$,
    $$values (2, 0.950::numeric, true)$$,
    'each duplicate adds a reference and the higher confidence (0.95 over 0.7 and 0.6) is kept'
);
select results_eq(
    $$select count(*)::integer from memory.memories where user_id = tests.recall('u')::uuid and content like 'I drink tea daily%'$$,
    array[1],
    'the duplicates stored nothing new'
);

-- Above and below the edge.
select results_eq(
    $$select outcome from memory.remember('I prefer green tea in the morning', 'preference', tests.recall('u')::uuid)$$,
    $$values ('added')$$,
    'another memory is added'
);
select tests.remember('green', (select id from memory.memories where content = 'I prefer green tea in the morning'));
select results_eq(
    $$select memory_id, outcome from memory.remember('I prefer green tea in a morning', 'preference', tests.recall('u')::uuid)$$,
    $$values (tests.recall('green')::uuid, 'duplicate')$$,
    'a near-duplicate above the threshold (0.8529) is a duplicate'
);
select results_eq(
    $$select memory_id <> tests.recall('green')::uuid, outcome
    from memory.remember('I prefer green tea in the morn', 'preference', tests.recall('u')::uuid)$$,
    $$values (true, 'added')$$,
    'a near-duplicate just below the threshold (0.8485) is a new memory'
);

-- Per user and per profile.
select results_eq(
    $$select memory_id <> tests.recall('tea')::uuid, outcome from memory.remember('I drink tea daily', 'preference', tests.recall('v')::uuid)$$,
    $$values (true, 'added')$$,
    'the same text for another user is added'
);
select results_eq(
    $$select memory_id <> tests.recall('tea')::uuid, outcome
    from memory.remember('I drink tea daily', 'preference', tests.recall('u')::uuid, tests.recall('pq')::uuid)$$,
    $$values (true, 'added')$$,
    'the same text for another profile of the same user is added'
);
select results_eq(
    $$select user_id, profile_id from memory.memories where content = 'I drink tea daily'
    and user_id in (tests.recall('u')::uuid, tests.recall('v')::uuid) order by user_id = tests.recall('v')::uuid, profile_id = tests.recall('pq')::uuid$$,
    $$values (tests.recall('u')::uuid, tests.recall('pu')::uuid), (tests.recall('u')::uuid, tests.recall('pq')::uuid),
        (tests.recall('v')::uuid, tests.recall('pv')::uuid)$$,
    'one memory per user and profile'
);

-- Archived, deleted and superseded memories do not absorb a duplicate.
select tests.remember('stamps', (select memory_id from memory.remember('I collect vintage stamps', 'fact', tests.recall('u')::uuid)));
-- (archived by the table owner, as the cap or the archival sweep would)
select tests.clear_authentication();
update memory.memories set archived = true where id = tests.recall('stamps')::uuid;
select tests.authenticate_as_service_role();
select tests.remember('langs', (select memory_id from memory.remember('I speak three languages', 'fact', tests.recall('u')::uuid)));
select memory.forget(tests.recall('langs')::uuid);
select tests.remember('bike', (select memory_id from memory.remember('I own a red bicycle', 'fact', tests.recall('u')::uuid)));
select memory.revise_memory(tests.recall('bike')::uuid, 'I sold my bicycle last week');
select results_eq(
    $$select memory_id <> tests.recall('stamps')::uuid, outcome from memory.remember('I collect vintage stamps', 'fact', tests.recall('u')::uuid)$$,
    $$values (true, 'added')$$,
    'an archived memory does not absorb its duplicate'
);
select results_eq(
    $$select memory_id <> tests.recall('langs')::uuid, outcome from memory.remember('I speak three languages', 'fact', tests.recall('u')::uuid)$$,
    $$values (true, 'added')$$,
    'a deleted memory does not absorb its duplicate'
);
select results_eq(
    $$select memory_id <> tests.recall('bike')::uuid, outcome from memory.remember('I own a red bicycle', 'fact', tests.recall('u')::uuid)$$,
    $$values (true, 'added')$$,
    'a superseded memory does not absorb its duplicate'
);
select results_eq(
    $$select reference_count from memory.memories
    where id in (tests.recall('stamps')::uuid, tests.recall('langs')::uuid, tests.recall('bike')::uuid)$$,
    $$values (0), (0), (0)$$,
    'the archived, deleted and superseded memories were not referenced'
);

-- A signed-in user gets the same dedup (the reference counter is not theirs to write directly).
select tests.authenticate_as(tests.recall('u')::uuid);
select results_eq(
    $$select memory_id, outcome from memory.remember('I drink tea daily', 'preference')$$,
    $$values (tests.recall('tea')::uuid, 'duplicate')$$,
    'a signed-in user''s repeat is a duplicate too'
);

-- The threshold is a setting: raised to 0.9 the 0.85 pair is two memories, lowered to 0.8 the
-- 0.8485 pair is one.
select tests.clear_authentication();
update memory_private.settings set value = '0.9' where key = 'dedup_threshold';
select tests.authenticate_as_service_role();
select results_eq(
    $$select memory_id <> tests.recall('tea')::uuid, outcome from memory.remember('I drink tea daily, ok', 'preference', tests.recall('u')::uuid)$$,
    $$values (true, 'added')$$,
    'with dedup_threshold 0.9, the 0.85 near-duplicate is a new memory'
);
select tests.clear_authentication();
update memory_private.settings set value = '0.8' where key = 'dedup_threshold';
select tests.authenticate_as_service_role();
select results_eq(
    $$select outcome from memory.remember('My sister Ana lives in Cebu City', 'relationship', tests.recall('u')::uuid)$$,
    $$values ('added')$$,
    'with dedup_threshold 0.8, an unrelated memory is still added'
);
select tests.remember('sister', (select id from memory.memories where content = 'My sister Ana lives in Cebu City'));
select is(
    round(extensions.similarity('My sister Ana lives in Cebu City', 'My sister Ana lives in Cebu C')::numeric, 4), 0.8485,
    'the lowered-edge pair is at 0.8485'
);
select results_eq(
    $$select memory_id, outcome from memory.remember('My sister Ana lives in Cebu C', 'relationship', tests.recall('u')::uuid)$$,
    $$values (tests.recall('sister')::uuid, 'duplicate')$$,
    'with dedup_threshold 0.8, the 0.8485 near-duplicate is a duplicate'
);

select * from finish();
rollback;
