-- memory.profile_user_id(profile): the profile's user, read under the caller's RLS. The owner and
-- their tenant's admin see it; a stranger and another tenant's admin get null; anon may not call.
begin;
select plan(6);

select tests.create_cast('rpc-profile-user');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;

select tests.authenticate_as_anon();
select throws_ok(
    $$select memory.profile_user_id(tests.recall('profile')::uuid)$$, '42501', null, 'anon cannot look profiles up'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.profile_user_id(tests.recall('profile')::uuid), tests.recall('owner')::uuid, 'the owner gets themselves');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.profile_user_id(tests.recall('profile')::uuid), null, 'a stranger gets nothing');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.profile_user_id(tests.recall('profile')::uuid), tests.recall('owner')::uuid, 'the owner''s tenant admin gets the owner');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(memory.profile_user_id(tests.recall('profile')::uuid), null, 'another tenant''s admin gets nothing');
select tests.authenticate_as_service_role();
select is(memory.profile_user_id(tests.recall('profile')::uuid), tests.recall('owner')::uuid, 'service_role gets the owner');

select * from finish();
rollback;
