-- memory.users: a user reads and updates their own row (settings only); a tenant admin reads the
-- users of their tenant; a signed-in user registers only themselves and never chooses a tenant;
-- only service_role moves users between tenants or deletes them.
begin;
select plan(22);

select tests.create_cast('rls-users');
select tests.remember('newcomer', tests.create_auth_user('rls-users.newcomer@supamem.test'));

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.users', '42501', null, 'anon cannot read users');
select throws_ok(
    $$insert into memory.users (id, auth_user_id) values (tests.recall('newcomer')::uuid, tests.recall('newcomer')::uuid)$$,
    '42501', null, 'anon cannot register anyone'
);

-- The owner reads their own row and not the stranger's, though both are in tenant A.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select id from memory.users where id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid)$$,
    $$values (tests.recall('owner')::uuid)$$,
    'the owner reads only their own user row'
);
select results_eq(
    $$update memory.users set memory_paused = true where id = tests.recall('owner')::uuid returning memory_paused$$,
    array[true],
    'the owner updates their own settings'
);
select throws_ok(
    $$update memory.users set tenant_id = tests.recall('tenant_b')::uuid where id = tests.recall('owner')::uuid$$,
    '42501', null, 'the owner cannot move themselves to another tenant'
);
select is_empty(
    $$update memory.users set memory_paused = true where id = tests.recall('stranger')::uuid returning id$$,
    'the owner cannot update another user''s settings (the row is hidden)'
);
select throws_ok(
    $$delete from memory.users where id = tests.recall('owner')::uuid$$,
    '42501', null, 'the owner cannot delete their user row (deleting the auth user does)'
);

-- A stranger neither reads nor changes the owner.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.users where id = tests.recall('owner')::uuid$$,
    'a stranger does not read the owner'
);
select is_empty(
    $$update memory.users set long_term_opt_in = true where id = tests.recall('owner')::uuid returning id$$,
    'a stranger cannot update the owner'
);

-- A newcomer registers only themselves, in no tenant.
select tests.authenticate_as(tests.recall('newcomer')::uuid);
select throws_ok(
    $$insert into memory.users (id, auth_user_id, tenant_id)
    values (tests.recall('newcomer')::uuid, tests.recall('newcomer')::uuid, tests.recall('tenant_a')::uuid)$$,
    '42501', null, 'a signed-in user cannot choose a tenant'
);
select throws_ok(
    $$insert into memory.users (id, auth_user_id) values (tests.recall('stranger')::uuid, tests.recall('stranger')::uuid)$$,
    '42501', null, 'a signed-in user cannot register someone else'
);
select throws_ok(
    $$insert into memory.users (id, external_id) values (tests.recall('newcomer')::uuid, 'chat-42')$$,
    '42501', null, 'a signed-in user cannot claim an external id'
);
select lives_ok(
    $$insert into memory.users (id, auth_user_id) values (tests.recall('newcomer')::uuid, tests.recall('newcomer')::uuid)$$,
    'a signed-in user registers themselves'
);
select results_eq(
    $$select tenant_id from memory.users where id = tests.recall('newcomer')::uuid$$,
    array[null::uuid],
    'a self-registered user is in no tenant'
);

-- Tenant A's admin reads tenant A's users (owner and stranger) but changes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select id from memory.users where id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid) order by id$$,
    $$select unnest(array[tests.recall('owner')::uuid, tests.recall('stranger')::uuid]) as id order by id$$,
    'tenant A''s admin reads tenant A''s users'
);
select is_empty(
    $$update memory.users set memory_paused = true where id = tests.recall('owner')::uuid returning id$$,
    'tenant A''s admin cannot update a user of the tenant'
);
select is_empty(
    $$select id from memory.users where id = tests.recall('newcomer')::uuid$$,
    'tenant A''s admin does not read a user outside the tenant'
);

-- Tenant B's admin reads none of tenant A's users.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select id from memory.users where id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid)$$,
    'tenant B''s admin reads no user of tenant A'
);

-- service_role reads, moves and deletes any user.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.users
    where id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid, tests.recall('newcomer')::uuid)$$,
    array[3],
    'service_role reads every user'
);
select results_eq(
    $$update memory.users set tenant_id = tests.recall('tenant_b')::uuid where id = tests.recall('newcomer')::uuid returning tenant_id$$,
    $$values (tests.recall('tenant_b')::uuid)$$,
    'service_role places a user in a tenant'
);
select results_eq(
    $$delete from memory.users where id = tests.recall('newcomer')::uuid returning id$$,
    $$values (tests.recall('newcomer')::uuid)$$,
    'service_role deletes a user'
);

-- An id must be identified one way or another.
select throws_ok(
    $$insert into memory.users (tenant_id) values (null)$$,
    '23514', null, 'a user without an auth user or external id is refused'
);

select * from finish();
rollback;
