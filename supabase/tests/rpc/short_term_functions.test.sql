-- memory.short_term_set / short_term_get / short_term_delete: seed 001's minutes-long state (a
-- pending clarification). A value lives for its TTL (default: the short_term_ttl setting, 5
-- minutes); once expired it reads as null at once, before any sweep, and setting the key again
-- starts it afresh. Reading is activity: the user's own read (or service_role's for them) moves the
-- expiry forward by the value's lifetime; an admin's read moves nothing. Same identities as every RPC.
begin;
select plan(32);

select tests.create_cast('rpc-short-term');

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.short_term_set('k', '1')$$, '42501', null, 'anon cannot short_term_set');
select throws_ok($$select memory.short_term_get('k')$$, '42501', null, 'anon cannot short_term_get');
select throws_ok($$select memory.short_term_delete('k')$$, '42501', null, 'anon cannot short_term_delete');

-- The owner sets a value with the default lifetime and reads it back.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (memory.short_term_set('clarification', '{"question": "which chart?"}')).expires_at,
    now() + (memory_private.setting('short_term_ttl') #>> '{}')::interval,
    'by default a value lives for the short_term_ttl setting'
);
select is(
    memory.short_term_get('clarification'), '{"question": "which chart?"}'::jsonb,
    'short_term_get returns the live value'
);
select is(
    (memory.short_term_set('clarification', '{"question": "natal or transit?"}', interval '30 seconds')).expires_at,
    now() + interval '30 seconds',
    'setting again with a TTL replaces value and expiry'
);
select is(memory.short_term_get('clarification') ->> 'question', 'natal or transit?', 'the new value is read');
select throws_ok($$select memory.short_term_set('k', '1', interval '0')$$, '22023', 'ttl must be positive and at most 100 years', 'a zero TTL is refused');
select throws_ok($$select memory.short_term_set('k', '1', interval '-1 minute')$$, '22023', null, 'a negative TTL is refused');
select is(memory.short_term_get('never set'), null::jsonb, 'a missing key reads as null');

-- Expired state reads as null at once, and the key can be set again.
select tests.clear_authentication();
update memory.short_term_state set expires_at = now() - interval '1 second'
where user_id = tests.recall('owner')::uuid and key = 'clarification';
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.short_term_get('clarification'), null::jsonb, 'an expired value reads as null before any sweep');
select lives_ok(
    $$select memory.short_term_set('clarification', '{"question": "again"}')$$,
    'the owner sets an expired key again'
);
select is(memory.short_term_get('clarification') ->> 'question', 'again', 'the key set again after expiry is live');

-- Delete says whether there was something to delete.
select memory.short_term_set('draft', '"hello"');
select is(memory.short_term_delete('draft', null, '"bye"'), false, 'with a value, state holding another is kept');
select is(memory.short_term_get('draft'), '"hello"'::jsonb, 'the state set meanwhile is still there');
select is(memory.short_term_delete('draft', null, '"hello"'), true, 'with its value, the state goes');
select memory.short_term_set('draft', '"hello"');
select is(memory.short_term_delete('draft'), true, 'short_term_delete of a present key is true');
select is(memory.short_term_delete('draft'), false, 'short_term_delete of a missing key is false');

-- A stranger reads and changes nothing.
select tests.clear_authentication();
select memory.short_term_set('pending', '{"step": 2}', interval '5 minutes', tests.recall('owner')::uuid);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.short_term_get('pending', tests.recall('owner')::uuid), null::jsonb, 'a stranger reads no state of the owner');
select throws_ok(
    $$select memory.short_term_set('pending', '0', null, tests.recall('owner')::uuid)$$,
    '42501', null, 'a stranger cannot set the owner''s state'
);
select is(memory.short_term_delete('pending', tests.recall('owner')::uuid), false, 'a stranger deletes nothing of the owner''s');

-- Tenant A's admin reads the owner's live state but writes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.short_term_get('pending', tests.recall('owner')::uuid), '{"step": 2}'::jsonb, 'tenant A''s admin reads the owner''s state');
select throws_ok(
    $$select memory.short_term_set('pending', '0', null, tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot set the owner''s state'
);
select is(memory.short_term_delete('pending', tests.recall('owner')::uuid), false, 'tenant A''s admin deletes nothing');

-- Tenant B's admin reads nothing.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is(memory.short_term_get('pending', tests.recall('owner')::uuid), null::jsonb, 'tenant B''s admin reads no state of tenant A');

-- service_role works for anyone, and must say whose.
select tests.authenticate_as_service_role();
select is(memory.short_term_get('pending', tests.recall('owner')::uuid) ->> 'step', '2', 'service_role reads the owner''s state');
select is(memory.short_term_delete('pending', tests.recall('owner')::uuid), true, 'service_role deletes the owner''s state');
-- Whatever is stored: the check must not depend on a row with that key existing somewhere.
select throws_ok(
    $$select memory.short_term_get('rpc-short-term: a key nobody has')$$,
    '22023', 'user id required', 'service_role must pass p_user_id'
);

-- Sliding expiry: 10 of the 30 minutes left after 20 idle minutes; the user's read restores 30.
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.short_term_set('sliding', '{"q": 1}', interval '30 minutes');
select tests.clear_authentication();
update memory.short_term_state set updated_at = updated_at - interval '20 minutes', expires_at = expires_at - interval '20 minutes'
where user_id = tests.recall('owner')::uuid and key = 'sliding';
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(memory.short_term_get('sliding', tests.recall('owner')::uuid), '{"q": 1}'::jsonb, 'the admin reads the value');
select tests.clear_authentication();
select ok(
    (select expires_at < now() + interval '11 minutes' from memory.short_term_state
    where user_id = tests.recall('owner')::uuid and key = 'sliding'),
    'an admin''s read does not move the expiry'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.short_term_get('sliding'), '{"q": 1}'::jsonb, 'the owner reads the value');
select tests.clear_authentication();
select results_eq(
    $$select expires_at - now(), expires_at - updated_at from memory.short_term_state
    where user_id = tests.recall('owner')::uuid and key = 'sliding'$$,
    $$values (interval '30 minutes', interval '30 minutes')$$,
    'the owner''s read gives it its whole lifetime again, from now'
);

select * from finish();
rollback;
