-- A profile's time zone is one Postgres can resolve (22023 otherwise, naming it): weekly and monthly
-- summaries are cut at the profile's local week and month boundaries.
begin;
select plan(6);

select tests.create_cast('constraints-tz');
select tests.authenticate_as(tests.recall('owner')::uuid);

select results_eq(
    $$insert into memory.profiles (user_id, name) values (tests.recall('owner')::uuid, 'Default') returning timezone$$,
    array['UTC'],
    'a profile defaults to UTC'
);
select lives_ok(
    $$insert into memory.profiles (user_id, name, timezone) values (tests.recall('owner')::uuid, 'Manila', 'Asia/Manila')$$,
    'a named zone is accepted'
);
select throws_ok(
    $$insert into memory.profiles (user_id, name, timezone) values (tests.recall('owner')::uuid, 'Mars', 'Mars/Olympus_Mons')$$,
    '22023', 'unknown time zone ''Mars/Olympus_Mons''', 'an unknown zone is refused'
);
select throws_ok(
    $$insert into memory.profiles (user_id, name, timezone) values (tests.recall('owner')::uuid, 'Blank', '')$$,
    '22023', 'unknown time zone ''''', 'an empty zone is refused'
);
select throws_ok(
    $$update memory.profiles set timezone = 'Nowhere/Atlantis' where user_id = tests.recall('owner')::uuid and name = 'Manila'$$,
    '22023', 'unknown time zone ''Nowhere/Atlantis''', 'an update to an unknown zone is refused'
);
select throws_ok(
    $$insert into memory.profiles (user_id, name, attributes) values (tests.recall('owner')::uuid, 'List', '[]')$$,
    '22023', 'attributes must be a JSON object, not array', 'profile attributes must be a JSON object'
);

select * from finish();
rollback;
