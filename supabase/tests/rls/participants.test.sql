-- memory.participants (together mode): the owner adds and removes participants; a participant
-- reads who shares the conversation, picks their own profile for it (seed 004: memory follows the
-- participant's own profile) and may leave, but cannot add anyone; the owner's tenant admin reads
-- the list; strangers and other tenants see nothing; nobody joins a conversation on their own.
begin;
select plan(28);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('rls-participants');
select tests.remember('participant', tests.create_auth_user('rls-participants.participant@supamem.test'));
select tests.remember('second', tests.create_auth_user('rls-participants.second@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select memory.register_user(tests.recall('second')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv',
    (memory.create_conversation(tests.recall('owner')::uuid, 'Together', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id) values
(tests.recall('conv')::uuid, tests.recall('participant')::uuid),
(tests.recall('conv')::uuid, tests.recall('second')::uuid);
with p as (
    insert into memory.profiles (user_id, name) values (tests.recall('participant')::uuid, 'Participant profile') returning id
)
select tests.remember('participant_profile', id) from p;
with p as (
    insert into memory.profiles (user_id, name) values (tests.recall('owner')::uuid, 'Owner profile') returning id
)
select tests.remember('owner_profile', id) from p;

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.participants', '42501', null, 'anon cannot read participants');
select throws_ok(
    $$insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid)$$,
    '42501', null, 'anon cannot add a participant'
);

-- The owner reads the list, adds and removes participants.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select count(*)::integer from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    array[2],
    'the owner reads the participants of their conversation'
);
select lives_ok(
    $$insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid)$$,
    'the owner adds a participant'
);
select results_eq(
    $$delete from memory.participants where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('stranger')::uuid
    returning user_id$$,
    $$values (tests.recall('stranger')::uuid)$$,
    'the owner removes a participant'
);
select throws_ok(
    $$update memory.participants set joined_at = now() where conversation_id = tests.recall('conv')::uuid$$,
    '42501', null, 'clients cannot change when someone joined'
);
select is_empty(
    $$update memory.participants set profile_id = tests.recall('owner_profile')::uuid
    where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('participant')::uuid returning user_id$$,
    'the owner cannot pick a participant''s profile'
);

-- A participant reads who shares the conversation, cannot add anyone, and may leave.
select tests.authenticate_as(tests.recall('participant')::uuid);
select results_eq(
    $$select count(*)::integer from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    array[2],
    'a participant reads every participant of the shared conversation'
);
select throws_ok(
    $$insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid)$$,
    '42501', null, 'a participant cannot add someone'
);
select results_eq(
    $$update memory.participants set profile_id = tests.recall('participant_profile')::uuid
    where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('participant')::uuid returning user_id$$,
    $$values (tests.recall('participant')::uuid)$$,
    'a participant picks their own profile for the shared conversation'
);
select throws_ok(
    $$update memory.participants set profile_id = tests.recall('owner_profile')::uuid
    where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('participant')::uuid$$,
    '23503', null, 'a participant cannot pick someone else''s profile'
);
select is_empty(
    $$update memory.participants set profile_id = null
    where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('second')::uuid returning user_id$$,
    'a participant cannot change another participant''s row'
);
select is_empty(
    $$delete from memory.participants where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('second')::uuid
    returning user_id$$,
    'a participant cannot remove another participant'
);
select results_eq(
    $$delete from memory.participants where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('participant')::uuid
    returning user_id$$,
    $$values (tests.recall('participant')::uuid)$$,
    'a participant leaves the conversation'
);
select is_empty(
    $$select user_id from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    'after leaving, the former participant reads the list no more'
);

-- A stranger neither reads the list nor joins on their own.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select user_id from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    'a stranger does not read the participants'
);
select throws_ok(
    $$insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid)$$,
    '42501', null, 'a stranger cannot join a conversation'
);
select is_empty(
    $$delete from memory.participants where conversation_id = tests.recall('conv')::uuid returning user_id$$,
    'a stranger cannot remove participants'
);
select is_empty(
    $$update memory.participants set profile_id = null where conversation_id = tests.recall('conv')::uuid returning user_id$$,
    'a stranger cannot change participant rows'
);

-- Tenant A's admin reads the list but changes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select user_id from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('second')::uuid)$$,
    'tenant A''s admin reads the participants of a tenant conversation'
);
select throws_ok(
    $$insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('admin_a')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot add a participant'
);
select is_empty(
    $$delete from memory.participants where conversation_id = tests.recall('conv')::uuid returning user_id$$,
    'tenant A''s admin cannot remove a participant'
);
select is_empty(
    $$update memory.participants set profile_id = null where conversation_id = tests.recall('conv')::uuid returning user_id$$,
    'tenant A''s admin cannot change participant rows'
);

-- Tenant B's admin sees nothing.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select user_id from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    'tenant B''s admin does not read tenant A''s participants'
);

-- service_role manages any conversation's participants.
select tests.authenticate_as_service_role();
select lives_ok(
    $$insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid)$$,
    'service_role adds a participant'
);
select results_eq(
    $$select count(*)::integer from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    array[2],
    'service_role reads every participant'
);
select results_eq(
    $$delete from memory.participants where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('stranger')::uuid
    returning user_id$$,
    $$values (tests.recall('stranger')::uuid)$$,
    'service_role removes a participant'
);

-- A participant row carries the tenant, so the tenant admin policy can filter on it.
select results_eq(
    $$select tenant_id from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'a participant row records the tenant'
);

select * from finish();
rollback;
