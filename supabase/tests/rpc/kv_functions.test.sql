-- memory.kv_set / kv_get / kv_list / kv_delete / kv_clear: seed 003's user memory. kv_set is an
-- atomic upsert (one row per user and key, the latest value wins); deleting a missing key is not
-- found (P0002). A signed-in user works on their own values; the owner's tenant admin reads them
-- but writes nothing; strangers and other tenants see nothing; service_role works for anyone.
begin;
select plan(31);

select tests.create_cast('rpc-kv');
select tests.remember('newcomer', tests.create_auth_user('rpc-kv.newcomer@supamem.test'));

-- anon is denied every function.
select tests.authenticate_as_anon();
select throws_ok($$select memory.kv_set('k', '{}')$$, '42501', null, 'anon cannot kv_set');
select throws_ok($$select memory.kv_get('k')$$, '42501', null, 'anon cannot kv_get');
select throws_ok($$select memory.kv_list()$$, '42501', null, 'anon cannot kv_list');
select throws_ok($$select memory.kv_delete('k')$$, '42501', null, 'anon cannot kv_delete');
select throws_ok($$select memory.kv_clear()$$, '42501', null, 'anon cannot kv_clear');

-- The owner: set, overwrite (upsert), get, list, delete, clear.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is((memory.kv_set('preferences', '{"language": "fil"}')).value, '{"language": "fil"}'::jsonb, 'kv_set stores a value');
select is((memory.kv_set('preferences', '{"language": "en"}')).value, '{"language": "en"}'::jsonb, 'kv_set on an existing key overwrites it');
select is(
    (select count(*)::integer from memory.user_kv where user_id = tests.recall('owner')::uuid and key = 'preferences'),
    1,
    'the upsert kept one row per key'
);
select is(memory.kv_get('preferences'), '{"language": "en"}'::jsonb, 'kv_get returns the latest value');
select is(memory.kv_get('no such key'), null::jsonb, 'kv_get of a missing key is null');
select memory.kv_set('pet', '{"name": "Bantay"}');
select results_eq(
    $$select key from memory.kv_list()$$,
    array['pet', 'preferences'],
    'kv_list returns the owner''s keys in order'
);
select throws_ok($$select memory.kv_set('bad', '"not an object"')$$, '22023', 'value must be a JSON object, not string',
    'a value must be a JSON object');
select throws_ok($$select memory.kv_set('  ', '{}')$$, '22023', 'key must not be empty', 'a key must not be blank');
select lives_ok($$select memory.kv_delete('pet')$$, 'kv_delete removes a key');
select throws_ok($$select memory.kv_delete('pet')$$, 'P0002', 'memory key ''pet'' not found', 'deleting a missing key is not found');

-- A brand-new signed-in user is registered by their first kv_set.
select tests.authenticate_as(tests.recall('newcomer')::uuid);
select is((memory.kv_set('first', '{"n": 1}')).user_id, tests.recall('newcomer')::uuid, 'a new user''s first kv_set registers them');

-- A stranger reads and writes none of the owner's values.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.kv_get('preferences', tests.recall('owner')::uuid), null::jsonb, 'a stranger reads no value of the owner');
select is_empty($$select * from memory.kv_list(tests.recall('owner')::uuid)$$, 'a stranger lists no value of the owner');
select throws_ok(
    $$select memory.kv_set('preferences', '{"hijacked": true}', tests.recall('owner')::uuid)$$,
    '42501', null, 'a stranger cannot set the owner''s values'
);
select throws_ok(
    $$select memory.kv_delete('preferences', tests.recall('owner')::uuid)$$,
    'P0002', null, 'a stranger deleting the owner''s key gets not found'
);
select is(memory.kv_clear(tests.recall('owner')::uuid), 0, 'a stranger clears none of the owner''s values');

-- Tenant A's admin reads the owner's values but writes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.kv_get('preferences', tests.recall('owner')::uuid), '{"language": "en"}'::jsonb, 'tenant A''s admin reads the owner''s value');
select throws_ok(
    $$select memory.kv_set('preferences', '{"by": "admin"}', tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot set the owner''s values'
);
select throws_ok(
    $$select memory.kv_delete('preferences', tests.recall('owner')::uuid)$$,
    'P0002', null, 'tenant A''s admin cannot delete the owner''s values'
);

-- Tenant B's admin reads nothing.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(memory.kv_get('preferences', tests.recall('owner')::uuid), null::jsonb, 'tenant B''s admin reads no value of tenant A');

-- service_role works for anyone and must say whose values.
select tests.authenticate_as_service_role();
select is(
    (memory.kv_set('preferences', '{"language": "es"}', tests.recall('owner')::uuid)).value ->> 'language', 'es',
    'service_role sets the owner''s value'
);
select is(memory.kv_get('preferences', tests.recall('owner')::uuid) ->> 'language', 'es', 'service_role reads the owner''s value');
-- Whatever is stored: the check must not depend on a row with that key existing somewhere.
select throws_ok(
    $$select memory.kv_get('rpc-kv: a key nobody has')$$,
    '22023', 'user id required', 'service_role must pass p_user_id to kv_get'
);
select throws_ok($$select memory.kv_delete('rpc-kv: a key nobody has')$$, '22023', 'user id required', 'service_role must pass p_user_id to kv_delete');

-- kv_clear empties the owner's store and nobody else's.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.kv_clear(), 1, 'the owner clears their one remaining value');
select tests.clear_authentication();
select is(
    (select count(*)::integer from memory.user_kv where user_id = tests.recall('newcomer')::uuid),
    1,
    'another user''s values are untouched'
);

select * from finish();
rollback;
