-- A new conversation's retention policy (TTL, rolling window) comes from, in order: the arguments,
-- the owner's tenant, the global settings (memory_private.settings, null = keep forever /
-- unlimited). It is fixed on the conversation when created. "Remember" defaults to on, off in
-- swiss mode.
begin;
select plan(9);

select tests.create_cast('constraints-defaults');
-- Tenant B keeps seed 000's policy: 24-hour TTL, 10-turn window.
update memory.tenants set conversation_ttl = interval '24 hours', conversation_window = 10
where id = tests.recall('tenant_b')::uuid;
select tests.remember('tenant_b_user', memory.user_id_for('constraints-defaults:chat-1', tests.recall('tenant_b')::uuid));
select tests.remember('free_user', memory.user_id_for('constraints-defaults:chat-2'));

-- No arguments, no tenant policy: the global settings apply (as shipped: keep everything).
select tests.remember('global', (memory.create_conversation(tests.recall('free_user')::uuid)).id);
select results_eq(
    $$select ttl, window_turns, expires_at from memory.conversations where id = tests.recall('global')::uuid$$,
    $$select (memory_private.setting('conversation_ttl') #>> '{}')::interval,
        (memory_private.setting('conversation_window') #>> '{}')::integer,
        now() + (memory_private.setting('conversation_ttl') #>> '{}')::interval$$,
    'without arguments or a tenant policy a conversation takes the global settings'
);
select results_eq(
    $$select ttl, window_turns from memory.conversations where id = tests.recall('global')::uuid$$,
    $$values (null::interval, null::integer)$$,
    'as shipped, the global defaults keep conversations forever and unbounded'
);
select is(
    (select last_turn from memory.conversations where id = tests.recall('global')::uuid), 0,
    'a new conversation starts at turn 0'
);

-- A tenant's policy applies to its users' conversations.
select tests.remember('tenant_conv', (memory.create_conversation(tests.recall('tenant_b_user')::uuid)).id);
select results_eq(
    $$select ttl, window_turns, expires_at, tenant_id from memory.conversations where id = tests.recall('tenant_conv')::uuid$$,
    $$values (interval '24 hours', 10, now() + interval '24 hours', tests.recall('tenant_b')::uuid)$$,
    'a tenant''s TTL and window apply to its users'' conversations'
);

-- Arguments win over the tenant.
select results_eq(
    $$select ttl, window_turns from memory.create_conversation(tests.recall('tenant_b_user')::uuid, p_ttl => interval '1 hour', p_window_turns => 3)$$,
    $$values (interval '1 hour', 3)$$,
    'arguments override the tenant policy'
);

-- The policy is fixed at creation: changing the tenant later does not change existing conversations.
update memory.tenants set conversation_window = 50 where id = tests.recall('tenant_b')::uuid;
select results_eq(
    $$select window_turns from memory.conversations where id = tests.recall('tenant_conv')::uuid$$,
    array[10],
    'a later tenant change leaves existing conversations as they were'
);

-- A global setting applies when neither argument nor tenant sets one.
update memory_private.settings set value = '25' where key = 'conversation_window';
select results_eq(
    $$select window_turns from memory.create_conversation(tests.recall('free_user')::uuid)$$,
    array[25],
    'a global window setting applies to conversations without a tenant policy'
);
update memory_private.settings set value = '"2 days"' where key = 'conversation_ttl';
select results_eq(
    $$select ttl from memory.create_conversation(tests.recall('free_user')::uuid)$$,
    array[interval '2 days'],
    'a global TTL setting applies too'
);

-- Remember: on by default, off by default in swiss mode.
select results_eq(
    $$select mode, remember from memory.create_conversation(tests.recall('free_user')::uuid, p_mode => 'swiss')
    union all
    select mode, remember from memory.create_conversation(tests.recall('free_user')::uuid, p_mode => 'astro')$$,
    $$values ('swiss', false), ('astro', true)$$,
    'remember defaults to off in swiss mode and on otherwise'
);

select * from finish();
rollback;
