-- memory.state_set / state_get / state_delete: seed 003's user mode, one per user, set by an
-- atomic upsert; deleting a missing state is not found (P0002). Same identities as every RPC:
-- the owner works on their own; the owner's tenant admin reads but writes nothing; strangers and
-- other tenants see nothing; service_role works for anyone.
begin;
select plan(19);

select tests.create_cast('rpc-state');

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.state_set('active')$$, '42501', null, 'anon cannot state_set');
select throws_ok($$select * from memory.state_get()$$, '42501', null, 'anon cannot state_get');
select throws_ok($$select memory.state_delete()$$, '42501', null, 'anon cannot state_delete');

-- The owner sets, overwrites, reads and deletes their mode.
select tests.authenticate_as(tests.recall('owner')::uuid);
select is((memory.state_set('active')).mode, 'active', 'state_set stores the mode');
select is((memory.state_set('halted')).mode, 'halted', 'state_set again overwrites it');
select results_eq($$select mode from memory.state_get()$$, array['halted'], 'state_get returns the one current mode');
select throws_ok($$select memory.state_set('')$$, '22023', 'mode must not be empty', 'a blank mode is refused');
select lives_ok($$select memory.state_delete()$$, 'state_delete removes the mode');
select is_empty($$select * from memory.state_get()$$, 'after delete there is no state');
select throws_ok($$select memory.state_delete()$$, 'P0002', 'user state not found', 'deleting a missing state is not found');
select memory.state_set('active');

-- A stranger reads and changes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty($$select * from memory.state_get(tests.recall('owner')::uuid)$$, 'a stranger reads no state of the owner');
select throws_ok(
    $$select memory.state_set('halted', tests.recall('owner')::uuid)$$, '42501', null, 'a stranger cannot set the owner''s state'
);
select throws_ok(
    $$select memory.state_delete(tests.recall('owner')::uuid)$$, 'P0002', null, 'a stranger deleting the owner''s state gets not found'
);

-- Tenant A's admin reads, writes nothing; tenant B's admin reads nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq($$select mode from memory.state_get(tests.recall('owner')::uuid)$$, array['active'], 'tenant A''s admin reads the owner''s state');
select throws_ok(
    $$select memory.state_set('halted', tests.recall('owner')::uuid)$$, '42501', null, 'tenant A''s admin cannot set the owner''s state'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty($$select * from memory.state_get(tests.recall('owner')::uuid)$$, 'tenant B''s admin reads no state of tenant A');

-- service_role works for anyone.
select tests.authenticate_as_service_role();
select is((memory.state_set('halted', tests.recall('owner')::uuid)).mode, 'halted', 'service_role sets the owner''s state');
select lives_ok($$select memory.state_delete(tests.recall('owner')::uuid)$$, 'service_role deletes the owner''s state');
select throws_ok($$select * from memory.state_get()$$, '22023', 'user id required', 'service_role must pass p_user_id');

select * from finish();
rollback;
