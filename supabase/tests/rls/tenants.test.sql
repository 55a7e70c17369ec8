-- memory.tenants: a tenant admin reads their own tenant and no other; users, strangers and anon
-- read nothing; only service_role creates, renames or deletes tenants.
begin;
select plan(16);

select tests.create_cast('rls-tenants');

-- anon: no access at all.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.tenants', '42501', null, 'anon cannot read tenants');
select throws_ok($$insert into memory.tenants (name) values ('anon tenant')$$, '42501', null, 'anon cannot create a tenant');

-- The owner (a user of tenant A) does not read the tenant row: membership is not administration.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is_empty(
    $$select id from memory.tenants where id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    'the owner reads no tenant row'
);
select throws_ok($$insert into memory.tenants (name) values ('mine')$$, '42501', null, 'the owner cannot create a tenant');
select throws_ok(
    $$update memory.tenants set name = 'renamed' where id = tests.recall('tenant_a')::uuid$$,
    '42501', null, 'the owner cannot rename a tenant'
);

-- A stranger reads nothing either.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.tenants where id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    'a stranger reads no tenant row'
);

-- Tenant A's admin reads tenant A, not tenant B, and cannot change or delete it.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select id from memory.tenants where id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'tenant A''s admin reads tenant A and only tenant A'
);
select throws_ok(
    $$update memory.tenants set name = 'renamed' where id = tests.recall('tenant_a')::uuid$$,
    '42501', null, 'tenant A''s admin cannot rename the tenant'
);
select throws_ok(
    $$delete from memory.tenants where id = tests.recall('tenant_a')::uuid$$,
    '42501', null, 'tenant A''s admin cannot delete the tenant'
);

-- Tenant B's admin reads tenant B only.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select results_eq(
    $$select id from memory.tenants where id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    $$values (tests.recall('tenant_b')::uuid)$$,
    'tenant B''s admin reads tenant B and not tenant A'
);

-- service_role manages tenants.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.tenants where id in (tests.recall('tenant_a')::uuid, tests.recall('tenant_b')::uuid)$$,
    array[2],
    'service_role reads every tenant'
);
select lives_ok(
    $$insert into memory.tenants (name, conversation_window) values ('rls-tenants tenant C', 10)$$,
    'service_role creates a tenant'
);
select results_eq(
    $$update memory.tenants set name = 'rls-tenants tenant A2' where id = tests.recall('tenant_a')::uuid returning name$$,
    array['rls-tenants tenant A2'],
    'service_role renames a tenant'
);
select results_eq(
    $$delete from memory.tenants where name = 'rls-tenants tenant C' returning conversation_window$$,
    array[10],
    'service_role deletes a tenant'
);

-- Tenant settings are checked: a blank name and a non-positive window are refused.
select throws_ok($$insert into memory.tenants (name) values ('  ')$$, '23514', null, 'a tenant name must not be blank');
select throws_ok(
    $$insert into memory.tenants (name, conversation_window) values ('rls-tenants bad', 0)$$,
    '23514', null, 'a tenant''s conversation window must be positive'
);

select * from finish();
rollback;
