-- What a foreign key or a column's range would refuse naming only itself is named by the writers:
-- a user nobody registered that the service role writes for is not found (memory_private.writing_user), a
-- tenant or a Supabase Auth user that is not there (memory_private.check_tenant, register_user,
-- memory_private.auth_user_exists, which only the service role may ask), a memory's text on every
-- way in (memory_private.check_memory_row), a lease past a day and a claim's limit past 2^31.
-- Signed-in callers keep RLS's answer. Nothing is written.
begin;
select plan(30);

select tests.create_cast('missing-refs');
select tests.remember('nobody', '00000000-0000-4000-8000-0000000b0d1e'::uuid);
select tests.remember('importer', tests.create_auth_user('missing-refs.importer@supamem.test'));

-- Writing for a user nobody registered.
select tests.authenticate_as_service_role();
select throws_ok(format($$select memory.kv_set('k', '{"a": 1}', %L)$$, tests.recall('nobody')),
    'P0002', 'user not found', 'the service role: a value for nobody');
select throws_ok(format($$select memory.remember('Likes tea', 'preference', %L)$$, tests.recall('nobody')),
    'P0002', 'user not found', 'a memory for nobody');
select throws_ok(format($$select memory.create_session(%L)$$, tests.recall('nobody')),
    'P0002', 'user not found', 'a conversation for nobody');
select lives_ok(format($$select memory.kv_set('k', '{"a": 1}', %L)$$, tests.recall('owner')), 'a value for a registered user');
select throws_ok(
    format($$select memory.import_memories('{"format": "supamem.memories", "version": 1}', %L)$$, tests.recall('nobody')),
    'P0002', 'user not found', 'an import for nobody'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select lives_ok($$select memory.kv_set('k', '{"a": 1}')$$, 'a signed-in user not registered yet registers by writing');
select tests.authenticate_as(tests.recall('importer')::uuid);
select is(memory.import_memories('{"format": "supamem.memories", "version": 1}'), 0,
    'and by importing their memories');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(format($$select memory.kv_set('k', '{"a": 1}', %L)$$, tests.recall('owner')),
    '42501', null, 'a signed-in user writing for another keeps RLS''s refusal');
select throws_ok(format($$select memory.kv_set('k', '{"a": 1}', %L)$$, tests.recall('nobody')),
    '42501', null, 'even for nobody: the check is the service role''s');
select tests.authenticate_as_anon();
select throws_ok(format($$select memory.kv_set('k', '{"a": 1}', %L)$$, tests.recall('nobody')),
    '42501', null, 'anon may not write at all');

-- Tenants and Supabase Auth users that are not there.
select tests.authenticate_as_service_role();
select throws_ok(format($$select memory.user_id_for('app-7', %L)$$, tests.recall('nobody')),
    '23503', format('tenant %s not found', tests.recall('nobody')), 'an app''s id in a tenant that is not there');
select throws_ok(format($$select memory.register_user(%L)$$, tests.recall('nobody')),
    '23503', format('no Supabase Auth user %s', tests.recall('nobody')), 'registering an id no Auth user has');
select throws_ok(format($$select memory.register_user(%L, %L)$$, tests.recall('admin_b'), tests.recall('nobody')),
    '23503', format('tenant %s not found', tests.recall('nobody')), 'registering into a tenant that is not there');
select is(memory.register_user(tests.recall('admin_b')::uuid, tests.recall('tenant_b')::uuid),
    tests.recall('admin_b')::uuid, 'registering an Auth user into a tenant');
select is(memory_private.auth_user_exists(tests.recall('stranger')::uuid), true, 'the service role asks: an Auth user');
select is(memory_private.auth_user_exists(tests.recall('nobody')::uuid), false, 'and an id no Auth user has');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(format($$select memory_private.auth_user_exists(%L)$$, tests.recall('stranger')), '42501', null,
    'the owner may not ask whether an Auth user is there');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(format($$select memory_private.auth_user_exists(%L)$$, tests.recall('owner')), '42501', null,
    'nor may a stranger');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(format($$select memory_private.auth_user_exists(%L)$$, tests.recall('owner')), '42501', null,
    'nor a tenant admin');
select tests.authenticate_as_anon();
select throws_ok(format($$select memory_private.auth_user_exists(%L)$$, tests.recall('owner')), '42501', null,
    'nor anon');

-- A memory's text, on every way in.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(format($$select memory.remember(%L, 'preference')$$, repeat('x', 2001)),
    '22023', 'content must be at most 2000 characters', 'a memory longer than 2,000 characters');
select lives_ok(format($$select memory.remember(%L, 'preference')$$, repeat('x', 2000)), 'and one of 2,000 is kept');
select throws_ok(
    format($$select memory.revise_memory((select id from memory.memories where user_id = %L limit 1), %L)$$,
        tests.recall('owner'), repeat('y', 2001)),
    '22023', 'content must be at most 2000 characters', 'a revision longer than 2,000 characters');
select tests.clear_authentication();
select throws_ok(
    format($$insert into memory.memories (user_id, profile_id, content, type) select %L, p.id, ' ', 'fact'
        from memory.profiles as p where p.user_id = %L$$, tests.recall('owner'), tests.recall('owner')),
    '22023', 'content must not be empty', 'a blank memory inserted directly');
select tests.authenticate_as_service_role();

-- The queue's ranges.
select throws_ok($$select memory.claim_jobs('{extract}', 'w', 2147483647)$$, '22023',
    'a worker name, a limit of 1..100 and a lease longer than 0 and at most a day are required', 'a claim of 2^31 - 1 jobs');
select throws_ok($$select memory.claim_jobs('{extract}', 'w', 1, '2 days')$$, '22023',
    'a worker name, a limit of 1..100 and a lease longer than 0 and at most a day are required', 'a claim for two days');
select throws_ok($$select memory.extend_lease(1, 'w', '1000000 years')$$, '22023',
    'a lease must be longer than 0 and at most a day', 'a lease extended past a day');
select throws_ok($$select memory.extend_lease(1, 'w', '-1 second')$$, '22023',
    'a lease must be longer than 0 and at most a day', 'or into the past');
select tests.clear_authentication();

select is((select count(*)::integer from memory.users where id = tests.recall('nobody')::uuid), 0, 'nobody was made');
select is(
    (select count(*)::integer from memory.memories where user_id = tests.recall('owner')::uuid and length(content) > 2000),
    0, 'no long memory was kept'
);

select * from finish();
rollback;
