-- memory.user_kv (seed 003's key-value memory): a user reads and writes only their own values; the
-- tenant admin of the owner's tenant reads them but writes nothing; strangers and other tenants
-- see nothing.
begin;
select plan(22);

select tests.create_cast('rls-user-kv');
select memory.kv_set('preferences', '{"language": "fil"}', tests.recall('owner')::uuid);

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.user_kv', '42501', null, 'anon cannot read values');
select throws_ok(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('owner')::uuid, 'k', '{}')$$,
    '42501', null, 'anon cannot write a value'
);

-- The owner reads, writes, updates and deletes their own values.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select key, value from memory.user_kv where user_id = tests.recall('owner')::uuid$$,
    $$values ('preferences', '{"language": "fil"}'::jsonb)$$,
    'the owner reads their value'
);
select results_eq(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('owner')::uuid, 'pet', '{"name": "Bantay"}')
    returning tenant_id$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'the owner writes a value through the Data API; it takes the owner''s tenant'
);
select throws_ok(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('stranger')::uuid, 'pet', '{}')$$,
    '42501', null, 'the owner cannot write a value for someone else'
);
select results_eq(
    $$update memory.user_kv set value = '{"name": "Muning"}' where user_id = tests.recall('owner')::uuid and key = 'pet'
    returning value ->> 'name'$$,
    array['Muning'],
    'the owner updates their value'
);
select throws_ok(
    $$update memory.user_kv set user_id = tests.recall('stranger')::uuid where user_id = tests.recall('owner')::uuid$$,
    '42501', null, 'the owner cannot hand a value to someone else'
);
select results_eq(
    $$delete from memory.user_kv where user_id = tests.recall('owner')::uuid and key = 'pet' returning key$$,
    array['pet'],
    'the owner deletes their value'
);

-- A stranger (same tenant) sees and changes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select key from memory.user_kv where user_id = tests.recall('owner')::uuid$$,
    'a stranger does not read the owner''s values'
);
select is_empty(
    $$update memory.user_kv set value = '{}' where user_id = tests.recall('owner')::uuid returning key$$,
    'a stranger cannot update the owner''s values'
);
select is_empty(
    $$delete from memory.user_kv where user_id = tests.recall('owner')::uuid returning key$$,
    'a stranger cannot delete the owner''s values'
);
select throws_ok(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('owner')::uuid, 'planted', '{}')$$,
    '42501', null, 'a stranger cannot write a value for the owner'
);

-- Tenant A's admin reads the owner's values and writes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select key from memory.user_kv where user_id = tests.recall('owner')::uuid$$,
    array['preferences'],
    'tenant A''s admin reads the owner''s values'
);
select is_empty(
    $$update memory.user_kv set value = '{}' where user_id = tests.recall('owner')::uuid returning key$$,
    'tenant A''s admin cannot update the owner''s values'
);
select is_empty(
    $$delete from memory.user_kv where user_id = tests.recall('owner')::uuid returning key$$,
    'tenant A''s admin cannot delete the owner''s values'
);
select throws_ok(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('owner')::uuid, 'by-admin', '{}')$$,
    '42501', null, 'tenant A''s admin cannot write a value for the owner'
);

-- Tenant B's admin sees nothing.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select key from memory.user_kv where user_id = tests.recall('owner')::uuid$$,
    'tenant B''s admin does not read tenant A''s values'
);

-- service_role reads and writes anyone's values.
select tests.authenticate_as_service_role();
select results_eq(
    $$select key from memory.user_kv where user_id = tests.recall('owner')::uuid$$,
    array['preferences'],
    'service_role reads the owner''s values'
);
select lives_ok(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('stranger')::uuid, 'service', '{"n": 1}')$$,
    'service_role writes a value for any user'
);
select results_eq(
    $$update memory.user_kv set value = '{"n": 2}' where user_id = tests.recall('stranger')::uuid and key = 'service'
    returning (value ->> 'n')::integer$$,
    array[2],
    'service_role updates any value'
);
select results_eq(
    $$delete from memory.user_kv where user_id = tests.recall('stranger')::uuid returning key$$,
    array['service'],
    'service_role deletes any value'
);

-- Values are JSON objects (seed 003 stores dicts).
select throws_ok(
    $$insert into memory.user_kv (user_id, key, value) values (tests.recall('owner')::uuid, 'scalar', '42')$$,
    '22023', 'value must be a JSON object, not number', 'a value must be a JSON object, and the refusal says so'
);

select * from finish();
rollback;
