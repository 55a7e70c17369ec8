-- memory.register_user(user, tenant): creates the memory.users row of a Supabase Auth user. A
-- signed-in user registers only themselves and never chooses a tenant (42501); registering twice
-- is harmless; service_role registers anyone, in any tenant, but a user already in another tenant
-- (or in none) is refused with 55000, not silently left where they are.
begin;
select plan(16);

select tests.create_cast('rpc-register');
select tests.remember('newcomer', tests.create_auth_user('rpc-register.newcomer@supamem.test'));
select tests.remember('placed', tests.create_auth_user('rpc-register.placed@supamem.test'));

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.register_user()$$, '42501', null, 'anon cannot register');

-- A new signed-in user registers themselves, in no tenant; again is harmless.
select tests.authenticate_as(tests.recall('newcomer')::uuid);
select throws_ok(
    $$select memory.register_user(p_tenant_id => tests.recall('tenant_a')::uuid)$$,
    '42501', null, 'a signed-in user cannot choose a tenant'
);
select is(memory.register_user(), tests.recall('newcomer')::uuid, 'a signed-in user registers themselves');
select is(memory.register_user(), tests.recall('newcomer')::uuid, 'registering again returns the same id');
select results_eq(
    $$select id, auth_user_id, tenant_id from memory.users where id = tests.recall('newcomer')::uuid$$,
    $$values (tests.recall('newcomer')::uuid, tests.recall('newcomer')::uuid, null::uuid)$$,
    'the row is keyed by the auth user, in no tenant'
);
select throws_ok(
    $$select memory.register_user(tests.recall('placed')::uuid)$$,
    '42501', null, 'a signed-in user cannot register someone else'
);

-- The owner (already registered in tenant A) stays where they are.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.register_user(), tests.recall('owner')::uuid, 'an existing user registering again is harmless');
select throws_ok(
    $$select memory.register_user(p_tenant_id => tests.recall('tenant_b')::uuid)$$,
    '42501', null, 'an existing user cannot move to another tenant by registering'
);

-- A tenant admin cannot register users into their tenant.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.register_user(tests.recall('placed')::uuid, tests.recall('tenant_a')::uuid)$$,
    '42501', null, 'a tenant admin cannot register users'
);

-- service_role registers anyone, in a tenant, and must say whom.
select tests.authenticate_as_service_role();
select is(
    memory.register_user(tests.recall('placed')::uuid, tests.recall('tenant_b')::uuid), tests.recall('placed')::uuid,
    'service_role registers a user'
);
select results_eq(
    $$select tenant_id from memory.users where id = tests.recall('placed')::uuid$$,
    $$values (tests.recall('tenant_b')::uuid)$$,
    'service_role places the user in the tenant it names'
);
select throws_ok($$select memory.register_user()$$, '22023', 'user id required', 'service_role must pass p_user_id');
select is(
    memory.register_user(tests.recall('placed')::uuid, tests.recall('tenant_b')::uuid), tests.recall('placed')::uuid,
    'registering again in the same tenant is harmless'
);
select throws_ok(
    format($$select memory.register_user(%L, %L)$$, tests.recall('placed'), tests.recall('tenant_a')),
    '55000', format('user %s is registered in another tenant or in none', tests.recall('placed')),
    'registering a user of tenant B in tenant A is refused, not ignored'
);
select throws_ok(
    format($$select memory.register_user(%L, %L)$$, tests.recall('newcomer'), tests.recall('tenant_a')),
    '55000', format('user %s is registered in another tenant or in none', tests.recall('newcomer')),
    'so is placing a user registered in no tenant (their rows would stay outside it)'
);
select results_eq(
    $$select tenant_id from memory.users where id in (tests.recall('placed')::uuid, tests.recall('newcomer')::uuid)
    order by id = tests.recall('placed')::uuid$$,
    $$values (null::uuid), (tests.recall('tenant_b')::uuid)$$,
    'neither moved: the newcomer in no tenant, the placed user in tenant B'
);

select * from finish();
rollback;
