-- memory.user_id_for(external_id, tenant): seeds 000/003 identify people by text ids ("user123",
-- a chat id). The same id in the same tenant is always the same user; the same text in another
-- tenant is someone else; the null tenant (the app's own users) is one namespace too. Empty ids
-- are refused (22023). It is a service function: signed-in users and anon cannot call it.
begin;
select plan(14);

select tests.create_cast('rpc-user-id-for');

-- anon and signed-in users are denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.user_id_for('user123')$$, '42501', null, 'anon cannot map external ids');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select memory.user_id_for('user123')$$, '42501', null, 'a signed-in user cannot map external ids');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.user_id_for('user123', tests.recall('tenant_a')::uuid)$$,
    '42501', null, 'a tenant admin cannot map external ids, not even in their tenant'
);

-- service_role maps ids.
select tests.authenticate_as_service_role();
select tests.remember('a1', memory.user_id_for('rpc-user-id-for:user123', tests.recall('tenant_a')::uuid));
select is(
    memory.user_id_for('rpc-user-id-for:user123', tests.recall('tenant_a')::uuid), tests.recall('a1')::uuid,
    'the same id in the same tenant maps to the same user twice'
);
select isnt(
    memory.user_id_for('rpc-user-id-for:user123', tests.recall('tenant_b')::uuid), tests.recall('a1')::uuid,
    'the same text in another tenant is another user'
);
select tests.remember('n1', memory.user_id_for('rpc-user-id-for:user123'));
select is(
    memory.user_id_for('rpc-user-id-for:user123', null), tests.recall('n1')::uuid,
    'the null tenant is one namespace: the same id maps to the same user'
);
select ok(
    tests.recall('n1')::uuid not in (
        tests.recall('a1')::uuid, memory.user_id_for('rpc-user-id-for:user123', tests.recall('tenant_b')::uuid)
    ),
    'the null tenant''s user is neither tenant''s user'
);
select isnt(
    memory.user_id_for('rpc-user-id-for:user124', tests.recall('tenant_a')::uuid), tests.recall('a1')::uuid,
    'a different id is a different user'
);
select results_eq(
    $$select tenant_id, external_id, auth_user_id from memory.users where id = tests.recall('a1')::uuid$$,
    $$values (tests.recall('tenant_a')::uuid, 'rpc-user-id-for:user123', null::uuid)$$,
    'the mapped user records tenant and external id and no auth user'
);
select results_eq(
    $$select count(*)::integer from memory.users where external_id = 'rpc-user-id-for:user123'$$,
    array[3],
    'three namespaces, three users, no duplicates'
);

-- Empty ids are refused.
select throws_ok($$select memory.user_id_for('')$$, '22023', 'external user id must not be empty', 'an empty id is refused');
select throws_ok($$select memory.user_id_for(E' \t ')$$, '22023', null, 'a whitespace-only id is refused');
select throws_ok($$select memory.user_id_for(null)$$, '22023', null, 'a null id is refused');
select throws_ok(
    $$select memory.user_id_for('rpc-user-id-for:ghost', gen_random_uuid())$$,
    '23503', null, 'an unknown tenant is refused'
);

select * from finish();
rollback;
