-- Oversized or malformed input is refused with a named SQLSTATE and changes nothing: every JSON
-- field, title and value a caller can send is bounded, not only a message's text; a profile's
-- zone must name a place; settings of a user who is not there are not found; a backfill needs a
-- year and a month; and a user cannot move to another tenant (their rows would stay readable by
-- the old tenant's admin).
begin;
select plan(21);

select tests.create_cast('constraints-hostile');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('profile', id) from p;
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Chat', p_window_turns => 1000)).id);
-- 100,001 bytes of JSON text: one byte over every 100,000-byte bound.
select tests.remember('big', jsonb_build_object('x', repeat('a', 99992))::text);

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(octet_length(tests.recall('big')), 100001, 'the oversized JSON is one byte over the bound');
select throws_ok(
    $$select memory.create_conversation(p_title => repeat('t', 501))$$,
    '22023', 'title must be at most 500 characters', 'a title over 500 characters is refused'
);
select throws_ok(
    $$select memory.create_conversation(p_title => 'ok', p_metadata => tests.recall('big')::jsonb)$$,
    '22023', 'metadata must be at most 100000 bytes as JSON text', 'conversation metadata over 100,000 bytes is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'hi', p_custom_payload => tests.recall('big')::jsonb)$$,
    '22023', 'custom_payload must be at most 100000 bytes as JSON text', 'a custom payload over 100,000 bytes is refused'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'hi', p_metadata => tests.recall('big')::jsonb)$$,
    '22023', 'metadata must be at most 100000 bytes as JSON text', 'message metadata over 100,000 bytes is refused'
);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'hi', 'hello', p_suggested_values => tests.recall('big')::jsonb)$$,
    '22023', 'suggested_values must be at most 100000 bytes as JSON text', 'suggested values over 100,000 bytes are refused'
);
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'hi', 'hello',
        p_tool_calls => jsonb_build_array(jsonb_build_object('output', repeat('o', 1000000))))$$,
    '22023', 'tool_calls must be at most 1000000 bytes as JSON text', 'tool calls over 1,000,000 bytes are refused'
);
select lives_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'hi', 'hello',
        p_tool_calls => jsonb_build_array(jsonb_build_object('output', repeat('o', 200000))))$$,
    'a tool call with a 200,000-character output fits'
);
select throws_ok(
    $$select memory.kv_set('prefs', tests.recall('big')::jsonb)$$,
    '22023', 'value must be at most 100000 bytes as JSON text', 'a key-value value over 100,000 bytes is refused'
);
select throws_ok(
    $$select memory.short_term_set('clarify', tests.recall('big')::jsonb)$$,
    '22023', 'value must be at most 100000 bytes as JSON text', 'a short-term value over 100,000 bytes is refused'
);
select throws_ok(
    $$select memory.remember('Likes tea', 'preference', p_context => tests.recall('big')::jsonb)$$,
    '22023', 'context must be at most 100000 bytes as JSON text', 'a memory context over 100,000 bytes is refused'
);
select throws_ok(
    $$update memory.profiles set attributes = tests.recall('big')::jsonb where id = tests.recall('profile')::uuid$$,
    '22023', 'attributes must be at most 100000 bytes as JSON text', 'profile attributes over 100,000 bytes are refused'
);

-- Zones name places; POSIX offsets are refused.
select throws_ok(
    $$update memory.profiles set timezone = '+25:00' where id = tests.recall('profile')::uuid$$,
    '22023', 'unknown time zone ''+25:00''', 'an offset is not a zone'
);
select throws_ok(
    $$update memory.profiles set timezone = 'AAA-167:59:59' where id = tests.recall('profile')::uuid$$,
    '22023', 'unknown time zone ''AAA-167:59:59''', 'a POSIX zone specification is not a zone'
);
select lives_ok(
    $$update memory.profiles set timezone = 'Etc/GMT+5' where id = tests.recall('profile')::uuid$$,
    'a named zone with an offset in its name is a zone'
);

select tests.clear_authentication();
select results_eq(
    $$select (select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid),
        (select count(*)::integer from memory.user_kv where user_id = tests.recall('owner')::uuid),
        (select count(*)::integer from memory.memories where user_id = tests.recall('owner')::uuid)$$,
    $$values (2, 0, 0)$$,
    'refused writes left nothing behind (only the turn that fit is stored)'
);

select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.set_memory_settings(true, p_user_id => gen_random_uuid())$$,
    'P0002', 'user not found', 'settings of a user who is not there are not found, not a row of nulls'
);
select throws_ok(
    $$select memory.backfill_month(tests.recall('profile')::uuid, null, 1)$$,
    '22023', 'year and month out of range', 'a backfill without a year is refused'
);
select throws_ok(
    $$select memory.backfill_month(tests.recall('profile')::uuid, 2026, null)$$,
    '22023', 'year and month out of range', 'a backfill without a month is refused'
);

select tests.clear_authentication();
select throws_ok(
    $$update memory.users set tenant_id = tests.recall('tenant_b')::uuid where id = tests.recall('owner')::uuid$$,
    '55000', 'a user''s tenant cannot change', 'a user cannot move to another tenant'
);
select throws_ok(
    $$update memory.users set tenant_id = null where id = tests.recall('owner')::uuid$$,
    '55000', 'a user''s tenant cannot change', 'a user cannot leave their tenant either'
);

select * from finish();
rollback;
