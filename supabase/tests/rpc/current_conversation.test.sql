-- memory.current_conversation(user, ttl, window): seed 000's one running conversation per user,
-- get-or-create: the most recently active live, unarchived conversation, else a new one with the
-- given (or default) retention. Calling it twice returns the same conversation. Others may read a
-- user's current conversation only where RLS lets them, and never create one for that user.
begin;
select plan(16);

select tests.create_cast('rpc-current');
select tests.remember('newcomer', tests.create_auth_user('rpc-current.newcomer@supamem.test'));

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.current_conversation()$$, '42501', null, 'anon cannot get a current conversation');

-- A brand-new signed-in user gets one with the default retention (and is registered on the way).
select tests.authenticate_as(tests.recall('newcomer')::uuid);
select lives_ok(
    $$select memory.current_conversation()$$,
    'a new user gets a current conversation with the default retention policy'
);

-- The owner: the first call creates it with seed 000's policy, the second returns the same one.
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember(
    'current', (memory.current_conversation(p_ttl => interval '24 hours', p_window_turns => 10)).id
);
select results_eq(
    $$select window_turns, ttl from memory.conversations where id = tests.recall('current')::uuid$$,
    $$values (10, interval '24 hours')$$,
    'a created current conversation takes the retention policy passed in'
);
select is(
    (memory.current_conversation()).id,
    tests.recall('current')::uuid,
    'the second call returns the same conversation'
);
select is(
    (memory.current_conversation(p_window_turns => 50)).window_turns,
    10,
    'retention arguments do not change an existing current conversation'
);
select results_eq(
    $$select count(*)::integer from memory.conversations where user_id = tests.recall('owner')::uuid$$,
    array[1],
    'get-or-create created exactly one conversation'
);

-- The most recently active conversation is the current one; archived and expired ones never are.
select tests.remember('other', (memory.create_conversation(p_title => 'Other', p_window_turns => 10)).id);
select tests.clear_authentication();
update memory.conversations set updated_at = now() - interval '1 hour' where id = tests.recall('current')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is((memory.current_conversation()).id, tests.recall('other')::uuid, 'the most recently active conversation is current');
update memory.conversations set archived = true where id = tests.recall('other')::uuid;
select is((memory.current_conversation()).id, tests.recall('current')::uuid, 'an archived conversation is not current');
select tests.clear_authentication();
update memory.conversations set expires_at = now() - interval '1 second' where id = tests.recall('current')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('fresh', (memory.current_conversation(p_window_turns => 10)).id);
select ok(
    tests.recall('fresh')::uuid not in (tests.recall('current')::uuid, tests.recall('other')::uuid),
    'when every conversation is archived or expired, a new one is created'
);

-- A stranger cannot read the owner's current conversation nor create one for the owner.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.current_conversation(tests.recall('owner')::uuid, p_window_turns => 10)$$,
    '42501', null, 'a stranger cannot get or create the owner''s current conversation'
);

-- Tenant A's admin reads the owner's current conversation but cannot create one.
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is(
    (memory.current_conversation(tests.recall('owner')::uuid)).id,
    tests.recall('fresh')::uuid,
    'tenant A''s admin reads the owner''s current conversation'
);
select throws_ok(
    $$select memory.current_conversation(tests.recall('stranger')::uuid, p_window_turns => 10)$$,
    '42501', null, 'tenant A''s admin cannot create a conversation for a user'
);

-- Tenant B's admin sees none and creates none.
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(
    $$select memory.current_conversation(tests.recall('owner')::uuid, p_window_turns => 10)$$,
    '42501', null, 'tenant B''s admin cannot get or create tenant A''s conversations'
);

-- service_role gets or creates anyone's, and must say whose.
select tests.authenticate_as_service_role();
select is(
    (memory.current_conversation(tests.recall('owner')::uuid)).id,
    tests.recall('fresh')::uuid,
    'service_role gets the owner''s current conversation'
);
select is(
    (memory.current_conversation(tests.recall('stranger')::uuid, p_window_turns => 10)).user_id,
    tests.recall('stranger')::uuid,
    'service_role creates a current conversation for any user'
);
select throws_ok(
    $$select memory.current_conversation()$$,
    '22023', 'user id required', 'service_role must pass p_user_id'
);

select * from finish();
rollback;
