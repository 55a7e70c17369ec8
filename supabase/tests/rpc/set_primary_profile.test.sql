-- memory.set_primary_profile(profile, user): seed 004's primary profile moves in one step (the
-- partial unique index allows one primary per user; the old one is cleared first). Only the
-- profile's owner or service_role moves it; for anyone else the profile is not found (P0002), and
-- so it is for service_role acting for a user the profile is not of.
begin;
select plan(15);

select tests.create_cast('rpc-primary');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values
    (tests.recall('owner')::uuid, 'Main', true),
    (tests.recall('owner')::uuid, 'Partner', false),
    (tests.recall('owner')::uuid, 'Child', false)
    returning id, name
)
select tests.remember(lower(name), id) from p;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.set_primary_profile(tests.recall('partner')::uuid)$$, '42501', null, 'anon cannot set a primary profile');

-- The owner moves the primary profile; exactly one stays primary.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (memory.set_primary_profile(tests.recall('partner')::uuid)).is_primary, true,
    'the owner makes another profile primary'
);
select results_eq(
    $$select name from memory.profiles where user_id = tests.recall('owner')::uuid and is_primary$$,
    array['Partner'],
    'the old primary was cleared: one primary profile'
);
select is(
    (memory.set_primary_profile(tests.recall('partner')::uuid)).id, tests.recall('partner')::uuid,
    'making the primary profile primary again changes nothing'
);
select throws_ok(
    $$select memory.set_primary_profile(gen_random_uuid())$$,
    'P0002', 'profile not found', 'a missing profile is not found'
);

-- Others cannot move it.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.set_primary_profile(tests.recall('child')::uuid)$$, 'P0002', null, 'a stranger gets not found'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.set_primary_profile(tests.recall('child')::uuid)$$, 'P0002', null, 'tenant A''s admin gets not found'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(
    $$select memory.set_primary_profile(tests.recall('child')::uuid)$$, 'P0002', null, 'tenant B''s admin gets not found'
);
select tests.clear_authentication();
select results_eq(
    $$select name from memory.profiles where user_id = tests.recall('owner')::uuid and is_primary$$,
    array['Partner'],
    'their attempts left the primary profile where it was'
);

-- service_role moves anyone's primary profile.
select tests.authenticate_as_service_role();
select is(
    (memory.set_primary_profile(tests.recall('child')::uuid)).name, 'Child',
    'service_role makes a profile primary'
);
select results_eq(
    $$select name from memory.profiles where user_id = tests.recall('owner')::uuid and is_primary$$,
    array['Child'],
    'still exactly one primary profile'
);
select throws_ok(
    format('select memory.set_primary_profile(%L, %L)', tests.recall('partner'), tests.recall('stranger')),
    'P0002', 'profile not found', 'service_role acting for another user does not find the profile'
);
select is(
    (memory.set_primary_profile(tests.recall('partner')::uuid, tests.recall('owner')::uuid)).name, 'Partner',
    'service_role acting for the owner moves it'
);

-- Another user's primary profile is untouched by the owner's moves.
select tests.clear_authentication();
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger main', true);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (memory.set_primary_profile(tests.recall('main')::uuid)).name, 'Main',
    'the owner moves their primary back'
);
select tests.clear_authentication();
select results_eq(
    $$select name from memory.profiles where user_id = tests.recall('stranger')::uuid and is_primary$$,
    array['Stranger main'],
    'another user''s primary profile is untouched'
);

select * from finish();
rollback;
