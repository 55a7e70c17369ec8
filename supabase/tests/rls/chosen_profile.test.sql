-- memory_private.chosen_profile(conversation): the profile the caller chose for a conversation they
-- take part in (a column no signed-in user may read), for their own prompt. It answers only about
-- the caller: the participant gets their choice; the owner, a stranger, a tenant admin and the
-- service role get null; anon may not call it.
begin;
select plan(6);

select tests.create_cast('rls-chosen-profile');
select tests.remember('guest', tests.create_auth_user('rls-chosen-profile.guest@supamem.test'));
select memory.register_user(tests.recall('guest')::uuid, tests.recall('tenant_a')::uuid);
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('guest')::uuid, 'Guest', true) returning id)
select tests.remember('guest_profile', id) from p;
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Shared', 'together')).id);
insert into memory.participants (conversation_id, user_id, profile_id)
values (tests.recall('conv')::uuid, tests.recall('guest')::uuid, tests.recall('guest_profile')::uuid);

select tests.authenticate_as_anon();
select throws_ok(
    $$select memory_private.chosen_profile(tests.recall('conv')::uuid)$$, '42501', null, 'anon may not ask'
);
select tests.authenticate_as(tests.recall('guest')::uuid);
select is(memory_private.chosen_profile(tests.recall('conv')::uuid), tests.recall('guest_profile')::uuid,
    'the participant gets the profile they chose');
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory_private.chosen_profile(tests.recall('conv')::uuid), null, 'the owner does not learn the guest''s choice');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory_private.chosen_profile(tests.recall('conv')::uuid), null, 'a stranger gets null');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory_private.chosen_profile(tests.recall('conv')::uuid), null, 'the tenant''s admin gets null');
select tests.authenticate_as_service_role();
select is(memory_private.chosen_profile(tests.recall('conv')::uuid), null, 'the service role, no participant, gets null');

select * from finish();
rollback;
