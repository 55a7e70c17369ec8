-- memory.create_conversation(user, title, mode, profile, remember, metadata, ttl, window): starts a
-- conversation with its retention policy. "Remember" defaults to on, except in swiss mode; the
-- profile must be the owner's; a signed-in user creates only their own; service_role any.
begin;
select plan(13);

select tests.create_cast('rpc-create-conversation');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('owner_profile', id) from p;
with p as (
    insert into memory.profiles (user_id, name) values (tests.recall('stranger')::uuid, 'Theirs') returning id
)
select tests.remember('stranger_profile', id) from p;

-- anon is denied.
select tests.authenticate_as_anon();
select throws_ok($$select memory.create_conversation()$$, '42501', null, 'anon cannot create a conversation');

-- The owner creates conversations with their own settings.
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select user_id, title, mode, profile_id, remember, metadata, ttl, window_turns
    from memory.create_conversation(
        p_title => 'Astro', p_mode => 'astro', p_profile_id => tests.recall('owner_profile')::uuid,
        p_metadata => '{"theme": "dark"}', p_ttl => interval '24 hours', p_window_turns => 10
    )$$,
    $$values (tests.recall('owner')::uuid, 'Astro', 'astro', tests.recall('owner_profile')::uuid, true,
        '{"theme": "dark"}'::jsonb, interval '24 hours', 10)$$,
    'the owner creates a conversation with title, mode, profile, metadata and retention'
);
select is((memory.create_conversation(p_mode => 'swiss')).remember, false, 'swiss mode does not remember by default');
select is(
    (memory.create_conversation(p_mode => 'swiss', p_remember => true)).remember, true,
    'swiss mode remembers when toggled on'
);
select ok(
    (select expires_at = created_at + interval '1 hour' from memory.create_conversation(p_ttl => interval '1 hour')),
    'a conversation with a TTL expires that long after it starts'
);
select throws_ok(
    $$select memory.create_conversation(p_mode => 'karaoke')$$,
    '23514', 'unknown conversation mode ''karaoke''', 'an unknown mode is refused, named'
);
select throws_ok(
    $$select memory.create_conversation(p_profile_id => tests.recall('stranger_profile')::uuid)$$,
    '23503', null, 'a profile of another user is refused'
);
select throws_ok(
    $$select memory.create_conversation(p_window_turns => 0)$$,
    '23514', 'window_turns must be positive', 'a window of 0 turns is refused'
);
-- A non-positive TTL must be reported as the bad input it is (23514, the ttl check), not as an
-- RLS violation of the already-expired row it would create.
select throws_ok(
    $$select memory.create_conversation(p_ttl => interval '-1 hour')$$,
    '23514', null, 'a negative TTL is refused as a check violation'
);

-- Nobody creates a conversation for someone else.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    $$select memory.create_conversation(tests.recall('owner')::uuid)$$,
    '42501', null, 'a stranger cannot create a conversation for the owner'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    $$select memory.create_conversation(tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant A''s admin cannot create a conversation for the owner'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(
    $$select memory.create_conversation(tests.recall('owner')::uuid)$$,
    '42501', null, 'tenant B''s admin cannot create a conversation for the owner'
);

-- service_role creates conversations for anyone.
select tests.authenticate_as_service_role();
select is(
    (memory.create_conversation(tests.recall('stranger')::uuid, p_profile_id => tests.recall('stranger_profile')::uuid)).user_id,
    tests.recall('stranger')::uuid,
    'service_role creates a conversation for any user'
);

select * from finish();
rollback;
