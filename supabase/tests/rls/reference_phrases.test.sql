-- memory.reference_phrases ("yung una", "the first one"): shared vocabulary that every signed-in
-- user reads and nobody but service_role changes; anon reads nothing.
begin;
select plan(10);

select tests.remember('user', tests.create_auth_user('rls-phrases.user@supamem.test'));

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.reference_phrases', '42501', null, 'anon cannot read reference phrases');

-- A signed-in user reads the phrases and changes none.
select tests.authenticate_as(tests.recall('user')::uuid);
select results_eq(
    $$select position from memory.reference_phrases where phrase in ('yung una', 'the first one', 'kanina', 'earlier') order by phrase$$,
    array[-1, -1, 1, 1],
    'a signed-in user reads the phrases'
);
select throws_ok(
    $$insert into memory.reference_phrases (phrase, position, language) values ('das erste', 1, 'de')$$,
    '42501', null, 'a signed-in user cannot add a phrase'
);
select throws_ok(
    $$update memory.reference_phrases set position = 2 where phrase = 'yung una'$$,
    '42501', null, 'a signed-in user cannot change a phrase'
);
select throws_ok(
    $$delete from memory.reference_phrases where phrase = 'yung una'$$,
    '42501', null, 'a signed-in user cannot delete a phrase'
);

-- service_role maintains the vocabulary.
select tests.authenticate_as_service_role();
select lives_ok(
    $$insert into memory.reference_phrases (phrase, position, language) values ('das erste', 1, 'de')$$,
    'service_role adds a phrase'
);
select results_eq(
    $$update memory.reference_phrases set position = 2 where phrase = 'das erste' returning position$$,
    array[2],
    'service_role changes a phrase'
);
select results_eq(
    $$delete from memory.reference_phrases where phrase = 'das erste' returning language$$,
    array['de'],
    'service_role deletes a phrase'
);

-- Phrases are stored normalised and point somewhere.
select throws_ok(
    $$insert into memory.reference_phrases (phrase, position, language) values ('The First', 1, 'en')$$,
    '23514', null, 'a phrase must be stored lower-case and trimmed'
);
select throws_ok(
    $$insert into memory.reference_phrases (phrase, position, language) values ('zeroth', 0, 'en')$$,
    '23514', null, 'position 0 points at nothing and is refused'
);

select * from finish();
rollback;
