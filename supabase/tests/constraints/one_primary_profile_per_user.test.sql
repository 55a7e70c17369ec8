-- Seed 004: at most one primary profile per user (a partial unique index, 23505 for a second
-- one); set_primary_profile is how the primary moves. Other users keep their own primary.
begin;
select plan(7);

select tests.create_cast('constraints-primary');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values
    (tests.recall('owner')::uuid, 'Main', true),
    (tests.recall('owner')::uuid, 'Second', false)
    returning id, name
)
select tests.remember(lower(name), id) from p;

select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Another main', true)$$,
    '23505', null, 'a second primary profile is refused'
);
select throws_ok(
    $$update memory.profiles set is_primary = true where id = tests.recall('second')::uuid$$,
    '23505', null, 'making a second profile primary by update is refused'
);
select lives_ok(
    $$insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Third', false)$$,
    'any number of non-primary profiles is fine'
);
select is(
    (memory.set_primary_profile(tests.recall('second')::uuid)).name, 'Second',
    'set_primary_profile moves the primary'
);
select results_eq(
    $$select name from memory.profiles where user_id = tests.recall('owner')::uuid and is_primary$$,
    array['Second'],
    'exactly one primary profile after the move'
);

-- The index is per user: the stranger has a primary of their own.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select lives_ok(
    $$insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger main', true)$$,
    'another user has their own primary profile'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Service main', true)$$,
    '23505', null, 'service_role cannot create a second primary either'
);

select * from finish();
rollback;
