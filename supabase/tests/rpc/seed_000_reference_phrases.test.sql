-- Seed 000's TURN_REFERENCES, every phrase: said inside a sentence it points at its position (1 =
-- the oldest turn shown, -1 = the latest), in both the Filipino and the English rows.
begin;
select plan(2);

select tests.authenticate_as_service_role();

select results_eq(
    $$select s.phrase, memory_private.reference_position(format('tungkol sa %s po', s.phrase))
    from unnest(array[
        'yung una', 'una', 'yung pangalawa', 'pangalawa', 'yung pangatlo', 'pangatlo', 'yung pang-apat', 'yung kanina',
        'kanina'
    ]) with ordinality as s (phrase, n)
    order by s.n$$,
    $$values ('yung una', 1), ('una', 1), ('yung pangalawa', 2), ('pangalawa', 2), ('yung pangatlo', 3),
        ('pangatlo', 3), ('yung pang-apat', 4), ('yung kanina', -1), ('kanina', -1)$$,
    'every Filipino phrase of seed 000 points at its turn'
);
select results_eq(
    $$select s.phrase, memory_private.reference_position(format('tell me about %s please', s.phrase))
    from unnest(array[
        'the first one', 'first', 'the second one', 'second', 'the third one', 'third', 'earlier', 'previous', 'last one'
    ]) with ordinality as s (phrase, n)
    order by s.n$$,
    $$values ('the first one', 1), ('first', 1), ('the second one', 2), ('second', 2), ('the third one', 3),
        ('third', 3), ('earlier', -1), ('previous', -1), ('last one', -1)$$,
    'every English phrase of seed 000 points at its turn'
);

select * from finish();
rollback;
