-- memory.profiles: a user reads and manages their own profiles; a tenant admin reads their
-- tenant's profiles but changes none; nobody creates a profile for someone else or picks its
-- tenant (it is copied from the owner).
begin;
select plan(22);

select tests.create_cast('rls-profiles');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true)
    returning id
)
select tests.remember('profile', id) from p;

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.profiles', '42501', null, 'anon cannot read profiles');
select throws_ok(
    $$insert into memory.profiles (user_id) values (tests.recall('owner')::uuid)$$,
    '42501', null, 'anon cannot create a profile'
);

-- The owner manages their own profiles.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.profiles where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('profile')::uuid)$$,
    'the owner reads their profile'
);
select lives_ok(
    $$insert into memory.profiles (user_id, name, timezone) values (tests.recall('owner')::uuid, 'Work', 'Asia/Manila')$$,
    'the owner creates a second profile'
);
select results_eq(
    $$select tenant_id from memory.profiles where user_id = tests.recall('owner')::uuid and name = 'Work'$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'a new profile takes the owner''s tenant'
);
select throws_ok(
    $$insert into memory.profiles (user_id, tenant_id, name) values (tests.recall('owner')::uuid, tests.recall('tenant_b')::uuid, 'Elsewhere')$$,
    '42501', null, 'the owner cannot choose a profile''s tenant'
);
select results_eq(
    $$update memory.profiles set attributes = '{"sign": "leo"}' where id = tests.recall('profile')::uuid returning attributes ->> 'sign'$$,
    array['leo'],
    'the owner updates their profile'
);
select throws_ok(
    $$update memory.profiles set user_id = tests.recall('stranger')::uuid where id = tests.recall('profile')::uuid$$,
    '42501', null, 'the owner cannot give a profile to someone else'
);
select results_eq(
    $$delete from memory.profiles where user_id = tests.recall('owner')::uuid and name = 'Work' returning name$$,
    array['Work'],
    'the owner deletes their profile'
);

-- A stranger (same tenant) cannot read, change, delete or create the owner's profiles.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.profiles where user_id = tests.recall('owner')::uuid$$,
    'a stranger does not read the owner''s profiles'
);
select is_empty(
    $$update memory.profiles set name = 'Hijacked' where id = tests.recall('profile')::uuid returning id$$,
    'a stranger cannot update the owner''s profile'
);
select is_empty(
    $$delete from memory.profiles where id = tests.recall('profile')::uuid returning id$$,
    'a stranger cannot delete the owner''s profile'
);
select throws_ok(
    $$insert into memory.profiles (user_id, name) values (tests.recall('owner')::uuid, 'Planted')$$,
    '42501', null, 'a stranger cannot create a profile for the owner'
);

-- Tenant A's admin reads the owner's profile and changes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select id from memory.profiles where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('profile')::uuid)$$,
    'tenant A''s admin reads the owner''s profile'
);
select is_empty(
    $$update memory.profiles set name = 'Admin was here' where id = tests.recall('profile')::uuid returning id$$,
    'tenant A''s admin cannot update the profile'
);
select is_empty(
    $$delete from memory.profiles where id = tests.recall('profile')::uuid returning id$$,
    'tenant A''s admin cannot delete the profile'
);
select throws_ok(
    $$insert into memory.profiles (user_id, name) values (tests.recall('owner')::uuid, 'Admin made')$$,
    '42501', null, 'tenant A''s admin cannot create a profile for the owner'
);

-- Tenant B's admin sees nothing of tenant A.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.profiles where user_id = tests.recall('owner')::uuid$$,
    'tenant B''s admin does not read tenant A''s profiles'
);

-- service_role manages anyone's profiles.
select tests.authenticate_as_service_role();
select results_eq(
    $$select id from memory.profiles where user_id = tests.recall('owner')::uuid$$,
    $$values (tests.recall('profile')::uuid)$$,
    'service_role reads the owner''s profile'
);
select lives_ok(
    $$insert into memory.profiles (user_id, name) values (tests.recall('stranger')::uuid, 'Made by the service')$$,
    'service_role creates a profile for any user'
);
select results_eq(
    $$update memory.profiles set name = 'Renamed' where id = tests.recall('profile')::uuid returning name$$,
    array['Renamed'],
    'service_role updates any profile'
);
select results_eq(
    $$delete from memory.profiles where user_id = tests.recall('stranger')::uuid returning name$$,
    array['Made by the service'],
    'service_role deletes any profile'
);

select * from finish();
rollback;
