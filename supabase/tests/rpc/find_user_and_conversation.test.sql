-- memory.find_user_id(id, tenant) and memory.find_conversation(user, match): the read-side
-- lookups. They answer what user_id_for / current_conversation would pick, or nothing, and never
-- create a row. find_conversation reads under the caller's RLS; find_user_id is a service function.
begin;
select plan(27);

select tests.create_cast('rpc-find');

select tests.authenticate_as_service_role();
select tests.remember('ext', memory.user_id_for('rpc-find:user123', tests.recall('tenant_a')::uuid));
select tests.remember('plain', memory.user_id_for('rpc-find:user123'));
select tests.remember(
    'running', (memory.current_conversation(tests.recall('owner')::uuid, p_match => '{"store": "s"}')).id
);
select tests.remember(
    'other_kind', (memory.current_conversation(tests.recall('owner')::uuid, p_match => '{"store": "t"}')).id
);
select tests.clear_authentication();

-- find_user_id: service_role only.
select tests.authenticate_as_anon();
select throws_ok($$select memory.find_user_id('rpc-find:user123')$$, '42501', null, 'anon cannot look up ids');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select memory.find_user_id('rpc-find:user123')$$, '42501', null, 'a signed-in user cannot look up ids'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.find_user_id('rpc-find:user123', tests.recall('tenant_a')::uuid)$$,
    '42501', null, 'a tenant admin cannot look up ids, not even in their tenant'
);

select tests.authenticate_as_service_role();
select is(
    memory.find_user_id('rpc-find:user123', tests.recall('tenant_a')::uuid), tests.recall('ext')::uuid,
    'an external id finds the user user_id_for made, in its tenant'
);
select is(
    memory.find_user_id('rpc-find:user123'), tests.recall('plain')::uuid,
    'the null tenant is its own namespace'
);
select is(
    memory.find_user_id('rpc-find:user123', tests.recall('tenant_b')::uuid), null,
    'the same text in another tenant finds nobody'
);
select is(
    memory.find_user_id(tests.recall('owner')), tests.recall('owner')::uuid,
    'a UUID without a tenant finds the Auth user of that id'
);
select is(
    memory.find_user_id(upper(replace(tests.recall('owner'), '-', ''))), tests.recall('owner')::uuid,
    'in any spelling of the UUID'
);
select is(
    memory.find_user_id(tests.recall('owner'), tests.recall('tenant_b')::uuid), null,
    'a UUID in another tenant is an external id there, and nobody has it'
);
select is(
    memory.find_user_id(tests.recall('owner'), tests.recall('tenant_a')::uuid), tests.recall('owner')::uuid,
    'in the user''s own tenant it names the user'
);
select is(
    memory.find_user_id(tests.recall('ext'), tests.recall('tenant_a')::uuid), tests.recall('ext')::uuid,
    'the UUID of a user user_id_for made finds that user in its tenant'
);
select is(
    memory.find_user_id(tests.recall('ext'), tests.recall('tenant_b')::uuid), null,
    'and nobody in another tenant'
);
select is(memory.find_user_id(tests.recall('plain')), tests.recall('plain')::uuid, 'or in the null tenant');
select is(memory.find_user_id('rpc-find:nobody'), null, 'an unknown id finds nobody');
set local enable_seqscan = off;  -- the plan that probes users_pkey
select is(memory.find_user_id('rpc-find:nobody'), null, 'also when the plan looks ids up by primary key');
select is(memory.find_user_id(tests.recall('owner')), tests.recall('owner')::uuid, 'and finds a UUID that way');
reset enable_seqscan;
select is(
    (select count(*)::integer from memory.users where external_id = 'rpc-find:nobody'), 0,
    'and leaves no user behind'
);

-- find_conversation: what current_conversation picks, under RLS, without creating anything.
select is(
    (memory.find_conversation(tests.recall('owner')::uuid, '{"store": "s"}')).id, tests.recall('running')::uuid,
    'service_role finds the running conversation of the matching kind'
);
select is(
    (memory.find_conversation(tests.recall('owner')::uuid, '{"store": "t"}')).id, tests.recall('other_kind')::uuid,
    'another kind finds its own conversation'
);
select is(
    (memory.current_conversation(tests.recall('owner')::uuid, p_match => '{"store": "s"}')).id,
    tests.recall('running')::uuid,
    'current_conversation still returns the same conversation'
);
select is_empty(
    $$select * from memory.find_conversation(tests.recall('stranger')::uuid, '{"store": "s"}')$$,
    'a user without one finds none'
);
select is(
    (select count(*)::integer from memory.conversations where user_id = tests.recall('stranger')::uuid), 0,
    'and none is created'
);
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('running')::uuid;
select is_empty(
    $$select * from memory.find_conversation(tests.recall('owner')::uuid, '{"store": "s"}')$$,
    'an expired conversation is not found'
);
update memory.conversations set expires_at = null where id = tests.recall('running')::uuid;

select tests.authenticate_as_anon();
select throws_ok(
    $$select memory.find_conversation(tests.recall('owner')::uuid)$$, '42501', null, 'anon cannot look up conversations'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (memory.find_conversation(p_match => '{"store": "s"}')).id, tests.recall('running')::uuid,
    'the owner finds their own conversation'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select * from memory.find_conversation(tests.recall('owner')::uuid, '{"store": "s"}')$$,
    'a stranger finds nothing of the owner''s'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select * from memory.find_conversation(tests.recall('owner')::uuid, '{"store": "s"}')$$,
    'an admin of another tenant finds nothing'
);

select * from finish();
rollback;
