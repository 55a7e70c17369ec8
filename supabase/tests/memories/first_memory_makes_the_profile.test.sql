-- A user's first memory makes their primary profile when they have none, for service_role and for
-- the signed-in user alike; a user whose profiles are all secondary still has to choose (23502).
begin;
select plan(5);

select tests.create_cast('first-profile');
select tests.remember('fresh', memory.user_id_for('first-profile.fresh'));
select tests.authenticate_as_service_role();
select is(
    (select outcome from memory.remember('Likes green tea', 'preference', tests.recall('fresh')::uuid)),
    'added', 'a user without profiles remembers'
);
select results_eq(
    format('select p.is_primary, count(m.id)::integer from memory.profiles as p left join memory.memories as m on m.profile_id = p.id
        where p.user_id = %L group by p.id', tests.recall('fresh')),
    $$values (true, 1)$$,
    'into a primary profile made for it'
);

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select outcome from memory.remember('Runs on Sundays', 'fact')),
    'added', 'a signed-in user without profiles remembers too'
);
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.profiles where user_id = tests.recall('owner')::uuid and is_primary),
    1, 'with one primary profile'
);

insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Work', false);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.remember('Prefers email', 'preference')$$,
    '23502', 'memory needs a profile', 'a user with only secondary profiles still chooses one'
);

select * from finish();
rollback;
