-- memory.user_state (seed 003's mode per user): a user reads and sets only their own state; the
-- owner's tenant admin reads it but changes nothing; strangers and other tenants see nothing.
begin;
select plan(20);

select tests.create_cast('rls-user-state');
select memory.state_set('active', tests.recall('owner')::uuid);

-- anon: no access.
select tests.authenticate_as_anon();
select throws_ok('select * from memory.user_state', '42501', null, 'anon cannot read state');
select throws_ok(
    $$insert into memory.user_state (user_id, mode) values (tests.recall('stranger')::uuid, 'active')$$,
    '42501', null, 'anon cannot set state'
);

-- The owner reads, updates and deletes their own state, and sets it when absent.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select mode from memory.user_state where user_id = tests.recall('owner')::uuid$$,
    array['active'],
    'the owner reads their state'
);
select results_eq(
    $$update memory.user_state set mode = 'halted' where user_id = tests.recall('owner')::uuid returning mode$$,
    array['halted'],
    'the owner updates their state'
);
select throws_ok(
    $$insert into memory.user_state (user_id, mode) values (tests.recall('stranger')::uuid, 'halted')$$,
    '42501', null, 'the owner cannot set someone else''s state'
);
select results_eq(
    $$delete from memory.user_state where user_id = tests.recall('owner')::uuid returning mode$$,
    array['halted'],
    'the owner deletes their state'
);
select results_eq(
    $$insert into memory.user_state (user_id, mode) values (tests.recall('owner')::uuid, 'active') returning tenant_id$$,
    $$values (tests.recall('tenant_a')::uuid)$$,
    'the owner sets their state through the Data API; it takes the owner''s tenant'
);

-- A stranger (same tenant) sees and changes nothing.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select mode from memory.user_state where user_id = tests.recall('owner')::uuid$$,
    'a stranger does not read the owner''s state'
);
select is_empty(
    $$update memory.user_state set mode = 'hijacked' where user_id = tests.recall('owner')::uuid returning mode$$,
    'a stranger cannot update the owner''s state'
);
select is_empty(
    $$delete from memory.user_state where user_id = tests.recall('owner')::uuid returning mode$$,
    'a stranger cannot delete the owner''s state'
);

-- Tenant A's admin reads the owner's state and changes nothing.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select mode from memory.user_state where user_id = tests.recall('owner')::uuid$$,
    array['active'],
    'tenant A''s admin reads the owner''s state'
);
select is_empty(
    $$update memory.user_state set mode = 'halted' where user_id = tests.recall('owner')::uuid returning mode$$,
    'tenant A''s admin cannot update the owner''s state'
);
select is_empty(
    $$delete from memory.user_state where user_id = tests.recall('owner')::uuid returning mode$$,
    'tenant A''s admin cannot delete the owner''s state'
);
select throws_ok(
    $$insert into memory.user_state (user_id, mode) values (tests.recall('stranger')::uuid, 'halted')$$,
    '42501', null, 'tenant A''s admin cannot set a user''s state'
);

-- Tenant B's admin sees nothing.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select mode from memory.user_state where user_id = tests.recall('owner')::uuid$$,
    'tenant B''s admin does not read tenant A''s state'
);

-- service_role reads and writes anyone's state.
select tests.authenticate_as_service_role();
select results_eq(
    $$select mode from memory.user_state where user_id = tests.recall('owner')::uuid$$,
    array['active'],
    'service_role reads the owner''s state'
);
select lives_ok(
    $$insert into memory.user_state (user_id, mode) values (tests.recall('stranger')::uuid, 'onboarding')$$,
    'service_role sets any user''s state'
);
select results_eq(
    $$update memory.user_state set mode = 'active' where user_id = tests.recall('stranger')::uuid returning mode$$,
    array['active'],
    'service_role updates any user''s state'
);
select results_eq(
    $$delete from memory.user_state where user_id = tests.recall('stranger')::uuid returning mode$$,
    array['active'],
    'service_role deletes any user''s state'
);

-- A mode is a non-blank word.
select throws_ok(
    $$insert into memory.user_state (user_id, mode) values (tests.recall('stranger')::uuid, '   ')$$,
    '22023', 'mode must not be empty', 'a blank mode is refused, and the refusal says so'
);

select * from finish();
rollback;
