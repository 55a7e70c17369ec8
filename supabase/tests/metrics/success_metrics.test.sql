-- memory.success_metrics (seed 004's success metrics, a month of one tenant) and
-- memory.note_dashboard_visit. The report: memories added per 10 answers, the reference rate,
-- helpfulness in the A/B arms, dashboard engagement, retention of users with many memories and
-- with fewer, and the share of live memories that near-duplicate an older one. Only the service
-- role and the tenant's admin read it (anon, a user, another tenant's admin: 42501). A user notes
-- their own dashboard visit, once a day; naming another user is 42501.
begin;
select plan(19);

select tests.create_cast('metrics-success');
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true);
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Month')).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs')).id);

select tests.authenticate_as_service_role();
select tests.remember('m1', (select memory_id from memory.remember('Runs every morning before work', 'pattern',
    tests.recall('owner')::uuid)));
select memory.remember('Reads poetry at night', 'pattern', tests.recall('owner')::uuid);
select tests.remember('m3', (select memory_id from memory.remember('Keeps bees in the garden', 'fact',
    tests.recall('owner')::uuid)));
-- Four answers: one given a memory in the memories arm (rated helpful), one held out (rated not
-- helpful), two plain, one of them the stranger's.
select memory.add_turn(tests.recall('conv')::uuid, 'How do I keep it up?', 'Keep running.',
    p_used_memory_ids => array[tests.recall('m1')::uuid], p_metadata => '{"memory_arm": "memories"}');
select memory.add_turn(tests.recall('conv')::uuid, 'And tomorrow?', 'Rest.', p_metadata => '{"memory_arm": "holdout"}');
select memory.add_turn(tests.recall('conv')::uuid, 'Thanks', 'Welcome.');
select memory.add_turn(tests.recall('theirs')::uuid, 'Hello', 'Hi.');
select memory.rate_answer(max(id), true) from memory.messages
where conversation_id = tests.recall('conv')::uuid and turn_number = 1;
select memory.rate_answer(max(id), false) from memory.messages
where conversation_id = tests.recall('conv')::uuid and turn_number = 2;
select tests.clear_authentication();
-- An edit makes a new version: still one memory added, one kept.
select tests.authenticate_as_service_role();
select memory.revise_memory(tests.recall('m1')::uuid, 'Runs every morning before work, rain or shine');
select tests.clear_authentication();
-- A near-duplicate that got past the dedup (an edit made outside the kit's writers).
update memory.memories set content = 'Runs every morning before work, rain or shine!' where id = tests.recall('m3')::uuid;

select tests.authenticate_as_anon();
select throws_ok('select memory.note_dashboard_visit()', '42501', null, 'anon cannot note a visit');
select throws_ok(format('select * from memory.success_metrics(p_tenant_id => %L)', tests.recall('tenant_a')), '42501', null,
    'anon cannot read the report');

select tests.authenticate_as(tests.recall('owner')::uuid);
select lives_ok('select memory.note_dashboard_visit()', 'a user notes their visit');
select lives_ok('select memory.note_dashboard_visit()', 'twice a day');
select throws_ok(format('select memory.note_dashboard_visit(%L)', tests.recall('stranger')), '42501', null,
    'but not another user''s');
select throws_ok(format('select * from memory.success_metrics(p_tenant_id => %L)', tests.recall('tenant_a')), '42501', null,
    'a user cannot read the report');

select tests.authenticate_as_service_role();
select throws_ok('select memory.note_dashboard_visit()', '22023', null, 'the service role names the user');
select throws_ok('select memory.note_dashboard_visit(gen_random_uuid())', 'P0002', null, 'a user who is registered');
select tests.clear_authentication();
select is((select count(*)::int from memory_private.dashboard_visits where user_id = tests.recall('owner')::uuid), 1,
    'one row a day');

select tests.authenticate_as(tests.recall('admin_b')::uuid);
select throws_ok(format('select * from memory.success_metrics(p_tenant_id => %L)', tests.recall('tenant_a')), '42501', null,
    'another tenant''s admin cannot read it');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok('select * from memory.success_metrics()', '42501', null, 'an admin names their tenant');
select results_eq(
    format($$select active_users, answers, memories_added, memories_per_10_turns, answers_with_memories, reference_rate,
        rated_with_memories, helpful_with_memories, rated_held_out, helpful_held_out, dashboard_users, dashboard_engagement
        from memory.success_metrics(p_tenant_id => %L)$$, tests.recall('tenant_a')),
    $$values (2, 4, 3, 7.5, 1, 0.25, 1, 1.0, 1, 0.0, 1, 0.5)$$,
    'the tenant''s admin reads the month: creation and reference rates, helpfulness by arm, engagement'
);
select results_eq(
    format($$select users_with_many_memories, retained_with_many_memories, users_with_fewer_memories,
        retained_with_fewer_memories, live_memories, duplicate_rate
        from memory.success_metrics(p_tenant_id => %L, p_many => 2)$$, tests.recall('tenant_a')),
    $$values (1, 0.0, 1, 0.0, 3, 0.333)$$,
    'retention by memories kept (nobody back yet in the month after) and the duplicate rate'
);
select throws_ok(format('select * from memory.success_metrics(p_tenant_id => %L, p_many => 0)', tests.recall('tenant_a')),
    '22023', null, 'p_many must be positive');
select throws_ok(format('select * from memory.success_metrics(''infinity'', %L)', tests.recall('tenant_a')),
    '22023', null, 'a month is a date');

-- The owner's last answer moved to last month: there, one active user, back this month.
select tests.clear_authentication();
update memory.messages set created_at = created_at - interval '1 month'
where conversation_id = tests.recall('conv')::uuid and turn_number = 3;
select tests.authenticate_as_service_role();
select results_eq(
    format($$select month, active_users, answers, users_with_fewer_memories, retained_with_fewer_memories
        from memory.success_metrics((now() - interval '1 month')::date, %L)$$, tests.recall('tenant_a')),
    $$values (date_trunc('month', now() at time zone 'UTC' - interval '1 month')::date, 1, 1, 1, 1.0)$$,
    'last month: the owner answered, kept no memories at its end, and came back'
);
select is(
    (select answers from memory.success_metrics(p_tenant_id => tests.recall('tenant_a')::uuid)), 3,
    'the service role reads the tenant''s month'
);
select is(current_setting('pg_trgm.similarity_threshold'), '0.3', 'the trigram threshold is restored');
set local timezone = 'Pacific/Pago_Pago';
select is((select month from memory.success_metrics(p_tenant_id => tests.recall('tenant_a')::uuid)),
    date_trunc('month', now() at time zone 'UTC')::date, 'months are UTC months, whatever the session''s time zone');

select * from finish();
rollback;
