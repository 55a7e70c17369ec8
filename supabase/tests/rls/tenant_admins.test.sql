-- memory.tenant_admins: an admin reads their own grants only (not who else administers, not other
-- tenants'); nobody but service_role grants or revokes admin rights, so no one can make themselves
-- an admin.
begin;
select plan(13);

select tests.create_cast('rls-tenant-admins');
-- A second admin of tenant A, to show admins do not read each other's grants.
select tests.remember('admin_a2', tests.create_auth_user('rls-tenant-admins.admin-a2@supamem.test'));
insert into memory.tenant_admins (tenant_id, user_id) values (tests.recall('tenant_a')::uuid, tests.recall('admin_a2')::uuid);

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.tenant_admins', '42501', null, 'anon cannot read tenant admins');

-- The owner reads no admin grant and cannot make themselves an admin.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is_empty(
    $$select user_id from memory.tenant_admins where tenant_id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    'the owner reads no admin grant'
);
select throws_ok(
    $$insert into memory.tenant_admins (tenant_id, user_id) values (tests.recall('tenant_a')::uuid, tests.recall('owner')::uuid)$$,
    '42501', null, 'the owner cannot make themselves an admin of their tenant'
);

-- A stranger likewise.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select user_id from memory.tenant_admins where tenant_id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    'a stranger reads no admin grant'
);

-- Tenant A's admin reads their own grant, not the other admin's of the same tenant, not tenant B's.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select tenant_id, user_id from memory.tenant_admins
    where tenant_id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    $$values (tests.recall('tenant_a')::uuid, tests.recall('admin_a')::uuid)$$,
    'tenant A''s admin reads only their own grant'
);
select throws_ok(
    $$insert into memory.tenant_admins (tenant_id, user_id) values (tests.recall('tenant_a')::uuid, tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot appoint another admin'
);
select throws_ok(
    $$insert into memory.tenant_admins (tenant_id, user_id) values (tests.recall('tenant_b')::uuid, tests.recall('admin_a')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot make themselves admin of tenant B'
);
select throws_ok(
    $$delete from memory.tenant_admins where user_id = tests.recall('admin_a2')::uuid$$,
    '42501', null, 'tenant A''s admin cannot revoke another admin'
);

-- Tenant B's admin reads their own grant only.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select results_eq(
    $$select tenant_id, user_id from memory.tenant_admins
    where tenant_id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    $$values (tests.recall('tenant_b')::uuid, tests.recall('admin_b')::uuid)$$,
    'tenant B''s admin reads only their own grant'
);

-- service_role reads, grants and revokes.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.tenant_admins
    where tenant_id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    array[3],
    'service_role reads every admin grant'
);
select lives_ok(
    $$insert into memory.tenant_admins (tenant_id, user_id) values (tests.recall('tenant_b')::uuid, tests.recall('admin_a')::uuid)$$,
    'service_role appoints an admin'
);
select results_eq(
    $$delete from memory.tenant_admins where user_id = tests.recall('admin_a2')::uuid returning tenant_id$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'service_role revokes an admin'
);

-- The appointment takes effect: admin_a now reads tenant B's row too.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select count(*)::integer from memory.tenants where id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    array[2],
    'an admin of two tenants reads both'
);

select * from finish();
rollback;
