-- memory.create_session(user): seed 001's session id, a new conversation with the default
-- retention policy, returned as a uuid. A signed-in user creates sessions only for themselves
-- (registering on first use); service_role creates them for anyone.
begin;
select plan(13);

select tests.create_cast('rpc-create-session');
select tests.remember('newcomer', tests.create_auth_user('rpc-create-session.newcomer@supamem.test'));

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.create_session()$$, '42501', null, 'anon cannot create a session');

-- The owner creates sessions: each call a new conversation of theirs.
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('s1', memory.create_session());
select tests.remember('s2', memory.create_session());
select is(pg_typeof(memory.create_session())::text, 'uuid', 'a session id is a uuid');
select isnt(tests.recall('s1')::uuid, tests.recall('s2')::uuid, 'each call creates a new session');
select results_eq(
    $$select user_id, mode, remember, archived from memory.conversations where id = tests.recall('s1')::uuid$$,
    $$values (tests.recall('owner')::uuid, 'chat', true, false)$$,
    'a session is a chat conversation of the caller, remembered, not archived'
);
select results_eq(
    $$select count(*)::integer from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    array[3],
    'three calls, three sessions'
);

-- A signed-in user without a memory.users row yet is registered by their first session.
select tests.authenticate_as(tests.recall('newcomer')::uuid);
select ok(memory.create_session() is not null, 'a new user creates a session');
select results_eq(
    $$select id from memory.users where id = tests.recall('newcomer')::uuid$$,
    $$values (tests.recall('newcomer')::uuid)$$,
    'creating the first session registered the user'
);

-- Nobody creates sessions for someone else.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.create_session(tests.recall('owner')::uuid)$$,
    '42501', null, 'a stranger cannot create a session for the owner'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.create_session(tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot create a session for the owner'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(
    $$select memory.create_session(tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant B''s admin cannot create a session for the owner'
);

-- service_role creates sessions for anyone, and must say whose.
select tests.authenticate_as_service_role();
select tests.remember('s3', memory.create_session(tests.recall('owner')::uuid));
select results_eq(
    $$select user_id, tenant_id from memory.conversations where id = tests.recall('s3')::uuid$$,
    $$values (tests.recall('owner')::uuid, tests.recall('tenant_a')::uuid)$$,
    'service_role creates a session for the owner, in the owner''s tenant'
);
select throws_ok($$select memory.create_session()$$, '22023', 'user id required', 'service_role must pass p_user_id');
select throws_ok(
    $$select memory.create_session(gen_random_uuid())$$,
    'P0002', 'user not found', 'a session for an unknown user is not found'
);

select * from finish();
rollback;
