-- Seed 004's short memory references ("M-143"): a user's memories are numbered from 1 in the order
-- written; a revision is a new memory and takes the next number, the old version keeps its own; a
-- near-duplicate takes none; a purged memory's number is never given again; each user counts their
-- own; an import numbers what it adds after the user's count. The user's row keeps the last
-- number given, which the owner cannot change, and the table refuses a number given twice.
begin;
select plan(15);

select tests.create_cast('memory-numbers');
insert into memory.profiles (user_id, name, is_primary) values
(tests.recall('owner')::uuid, 'Me', true), (tests.recall('stranger')::uuid, 'Me', true);

select tests.authenticate_as_service_role();
select tests.remember('first', (select memory_id from memory.remember('Training for a marathon', 'goal', tests.recall('owner')::uuid)));
select tests.remember('second', (select memory_id from memory.remember('Prefers tea to coffee', 'preference', tests.recall('owner')::uuid)));
select results_eq(
    format('select number from memory.memories where id in (%L, %L) order by created_at, number',
        tests.recall('first'), tests.recall('second')),
    array[1, 2],
    'a user''s memories are numbered from 1 in the order written'
);

select is(
    (select outcome from memory.remember('Training for a marathon', 'goal', tests.recall('owner')::uuid)),
    'duplicate',
    'a near-duplicate is referenced again'
);
select is(
    (select memories_numbered from memory.users where id = tests.recall('owner')::uuid),
    2,
    'and takes no number'
);

select tests.remember('revised', (select id from memory.revise_memory(tests.recall('second')::uuid, 'Prefers green tea')));
select results_eq(
    format('select id, number from memory.memories where id in (%L, %L) order by number',
        tests.recall('second'), tests.recall('revised')),
    format('values (%L::uuid, 2), (%L::uuid, 3)', tests.recall('second'), tests.recall('revised')),
    'a revision takes the next number; the version it replaced keeps its own'
);

select tests.remember('theirs', (select memory_id from memory.remember('Training for a marathon', 'goal', tests.recall('stranger')::uuid)));
select is(
    (select number from memory.memories where id = tests.recall('theirs')::uuid), 1, 'each user counts their own'
);

-- Purged: its number is not given again.
select memory.forget(tests.recall('revised')::uuid);
select tests.clear_authentication();
delete from memory.memories where id = tests.recall('revised')::uuid;
select tests.authenticate_as_service_role();
select tests.remember('after', (select memory_id from memory.remember('Lives in Lisbon', 'fact', tests.recall('owner')::uuid)));
select is(
    (select number from memory.memories where id = tests.recall('after')::uuid),
    4,
    'a purged memory''s number is never given again'
);

-- Written by the table's owner (no API role inserts memories) with a number another memory holds.
select tests.clear_authentication();
select throws_ok(
    format($$insert into memory.memories (user_id, content, type, number) values (%L, 'Has a cat', 'fact', 1)$$,
        tests.recall('owner')),
    '23505', null,
    'a number another memory of the user holds is refused'
);
insert into memory.memories (user_id, content, type) values (tests.recall('owner')::uuid, 'Has a dog', 'fact');
select is(
    (select number from memory.memories where user_id = tests.recall('owner')::uuid and content = 'Has a dog'),
    5,
    'an insert that names none takes the next'
);
select results_eq(
    format('select max(number), count(distinct number)::integer, count(*)::integer from memory.memories where user_id = %L',
        tests.recall('owner')),
    $$values (5, 4, 4)$$,
    'the owner''s numbers are distinct, the last one the count written less the purged'
);

select tests.authenticate_as_service_role();
-- The owner's export imported for the stranger, who has one memory: numbered after it, in the
-- order written, with one update of the stranger's count.
select tests.clear_authentication();
-- Written an hour apart (one transaction gives them all one time).
update memory.memories set created_at = now() - (10 - number) * interval '1 hour'
where user_id = tests.recall('owner')::uuid;
select tests.authenticate_as_service_role();
select memory.import_memories(memory.export_memories(tests.recall('owner')::uuid), tests.recall('stranger')::uuid);
select results_eq(
    format('select number, content from memory.memories where user_id = %L order by number', tests.recall('stranger')),
    $$values (1, 'Training for a marathon'), (2, 'Training for a marathon'), (3, 'Prefers tea to coffee'),
        (4, 'Lives in Lisbon'), (5, 'Has a dog')$$,
    'an import numbers what it adds after the user''s count, in the order written, not as the export did'
);
select is(
    (select memories_numbered from memory.users where id = tests.recall('stranger')::uuid), 5,
    'and the count moves past them'
);
select is(
    (select array_agg(s.number order by s.number) from memory.select_memories(tests.recall('owner')::uuid) as s),
    array[1, 4, 5],
    'the memories chosen for a prompt carry their numbers (2 was replaced, 3 purged)'
);
select tests.clear_authentication();

-- The owner may set their memory settings, not their count.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    format('update memory.users set memories_numbered = 0 where id = %L', tests.recall('owner')),
    '42501', null,
    'the owner cannot change the last number given'
);
select tests.clear_authentication();

-- Set back by hand (the service role may write users), the next write is refused, never numbered twice.
select tests.authenticate_as_service_role();
update memory.users set memories_numbered = 0 where id = tests.recall('owner')::uuid;
select throws_ok(
    $$select memory.remember('Plays the cello', 'fact', tests.recall('owner')::uuid)$$,
    '23505', null,
    'a number given twice is refused'
);
select is(
    (select count(*)::integer from memory.memories where user_id = tests.recall('owner')::uuid and content = 'Plays the cello'),
    0,
    'and nothing is written'
);
select tests.clear_authentication();

select * from finish();
rollback;
