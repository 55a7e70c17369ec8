-- memory.short_term_state (seed 001's minutes-long state): a user reads and writes only their own
-- live state; expired state is invisible to every signed-in reader before any sweep, and setting
-- the key again replaces it; the owner's tenant admin reads live state but writes nothing;
-- strangers and other tenants see nothing.
begin;
select plan(22);

select tests.create_cast('rls-short-term');
select memory.short_term_set('clarification', '{"question": "which chart?"}', interval '5 minutes', tests.recall('owner')::uuid);
select memory.short_term_set('stale', '{"old": true}', interval '5 minutes', tests.recall('owner')::uuid);
-- Let one value expire without waiting.
update memory.short_term_state set expires_at = now() - interval '1 second'
where user_id = tests.recall('owner')::uuid and key = 'stale';

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.short_term_state', '42501', null, 'anon cannot read short-term state');
select throws_ok(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('owner')::uuid, 'k', '1', now() + interval '1 minute')$$,
    '42501', null, 'anon cannot write short-term state'
);

-- The owner reads their live state (not the expired one), writes, updates and deletes.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select key from memory.short_term_state where user_id = tests.recall('owner')::uuid$$,
    array['clarification'],
    'the owner reads their live state and not the expired one'
);
select results_eq(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('owner')::uuid, 'draft', '"hello"', now() + interval '1 minute') returning tenant_id$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'the owner writes state through the Data API; it takes the owner''s tenant'
);
select throws_ok(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('stranger')::uuid, 'draft', '1', now() + interval '1 minute')$$,
    '42501', null, 'the owner cannot write state for someone else'
);
select results_eq(
    $$update memory.short_term_state set value = '"hello again"' where user_id = tests.recall('owner')::uuid and key = 'draft'
    returning value #>> '{}'$$,
    array['hello again'],
    'the owner updates their state'
);
select results_eq(
    $$delete from memory.short_term_state where user_id = tests.recall('owner')::uuid and key = 'draft' returning key$$,
    array['draft'],
    'the owner deletes their state'
);
-- Setting an expired key again (PostgREST's upsert) must replace it, not fail on the hidden row.
select lives_ok(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('owner')::uuid, 'stale', '{"fresh": true}', now() + interval '1 minute')
    on conflict (user_id, key) do update set value = excluded.value, expires_at = excluded.expires_at$$,
    'the owner upserts over their own expired state'
);

-- A stranger (same tenant) sees and changes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select key from memory.short_term_state where user_id = tests.recall('owner')::uuid$$,
    'a stranger does not read the owner''s state'
);
select is_empty(
    $$update memory.short_term_state set value = '0' where user_id = tests.recall('owner')::uuid returning key$$,
    'a stranger cannot update the owner''s state'
);
select is_empty(
    $$delete from memory.short_term_state where user_id = tests.recall('owner')::uuid returning key$$,
    'a stranger cannot delete the owner''s state'
);
select throws_ok(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('owner')::uuid, 'planted', '1', now() + interval '1 minute')$$,
    '42501', null, 'a stranger cannot write state for the owner'
);

-- Tenant A's admin reads the owner's live state and writes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select key from memory.short_term_state where user_id = tests.recall('owner')::uuid and key = 'clarification'$$,
    array['clarification'],
    'tenant A''s admin reads the owner''s live state'
);
select is_empty(
    $$update memory.short_term_state set value = '0' where user_id = tests.recall('owner')::uuid returning key$$,
    'tenant A''s admin cannot update the owner''s state'
);
select is_empty(
    $$delete from memory.short_term_state where user_id = tests.recall('owner')::uuid returning key$$,
    'tenant A''s admin cannot delete the owner''s state'
);
select throws_ok(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('owner')::uuid, 'by-admin', '1', now() + interval '1 minute')$$,
    '42501', null, 'tenant A''s admin cannot write state for the owner'
);

-- Tenant B's admin sees nothing.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select key from memory.short_term_state where user_id = tests.recall('owner')::uuid$$,
    'tenant B''s admin does not read tenant A''s state'
);

-- service_role reads everything (expired rows included: it runs the sweep) and writes for anyone.
select tests.authenticate_as_service_role();
select results_eq(
    $$select count(*)::integer from memory.short_term_state
    where user_id = tests.recall('owner')::uuid and key in ('clarification', 'stale')$$,
    array[2],
    'service_role reads the owner''s state, expired included'
);
select lives_ok(
    $$insert into memory.short_term_state (user_id, key, value, expires_at)
    values (tests.recall('stranger')::uuid, 'service', '1', now() + interval '1 minute')$$,
    'service_role writes state for any user'
);
select results_eq(
    $$update memory.short_term_state set value = '2' where user_id = tests.recall('stranger')::uuid returning value::integer$$,
    array[2],
    'service_role updates any user''s state'
);
select results_eq(
    $$delete from memory.short_term_state where user_id = tests.recall('stranger')::uuid returning key$$,
    array['service'],
    'service_role deletes any user''s state'
);

-- Every row has an expiry: short-term state is never permanent.
select throws_ok(
    $$insert into memory.short_term_state (user_id, key, value) values (tests.recall('stranger')::uuid, 'forever', '1')$$,
    '23502', null, 'short-term state without an expiry is refused'
);

select * from finish();
rollback;
