-- memory.search_messages runs as the owner after one access check (reads_user_messages) instead
-- of the messages policy on every row; what it returns is held here to what that policy shows each
-- caller: the owner and their tenant's admin find what they read, the service role the user it
-- names, a stranger, another tenant's admin and a participant nothing of the owner's, anon is
-- refused; an admin never reads a message outside the tenants they administer (a user moved into
-- a tenant keeps older messages outside it).
begin;
select plan(9);

select tests.create_cast('search-access');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Trip')).id);
select count(*) from generate_series(1, 3) as i
cross join lateral memory.add_turn(tests.recall('conv')::uuid, format('Kayak day %s', i), 'Paddle on.') as t;
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid);
-- A user without a tenant writes, then joins tenant A.
select tests.remember('moved', tests.create_auth_user('search-access.moved@supamem.test'));
insert into memory.users (id, auth_user_id) values (tests.recall('moved')::uuid, tests.recall('moved')::uuid);
select tests.remember('moved_conv', (memory.create_conversation(tests.recall('moved')::uuid, 'Before')).id);
select memory.add_turn(tests.recall('moved_conv')::uuid, 'Kayak rental before the move', 'Noted.');
update memory.users set tenant_id = tests.recall('tenant_a')::uuid where id = tests.recall('moved')::uuid;

-- What the messages policy shows the current caller of a user's kayak messages.
create function pg_temp.visible(p_user uuid) returns setof bigint language sql as $$
    select m.id from memory.messages as m
    where m.user_id = p_user and m.search @@ to_tsquery('english', 'kayak') order by m.id
$$;
create function pg_temp.found(p_user uuid) returns setof bigint language sql as $$
    select s.id from memory.search_messages('kayak', p_user) as s order by s.id
$$;

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select pg_temp.found(tests.recall('owner')::uuid)$$, $$select pg_temp.visible(tests.recall('owner')::uuid)$$,
    'the owner finds what they read'
);
select is(
    (select count(*)::integer from pg_temp.found(tests.recall('owner')::uuid)), 3, 'their three kayak questions'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select pg_temp.found(tests.recall('owner')::uuid)$$, $$select pg_temp.visible(tests.recall('owner')::uuid)$$,
    'the owner''s tenant admin finds what they read of the owner''s'
);
select is_empty(
    $$select pg_temp.found(tests.recall('moved')::uuid)$$,
    'nothing a user wrote before joining the admin''s tenant (the policy shows the admin none of it)'
);
select is_empty($$select pg_temp.visible(tests.recall('moved')::uuid)$$, 'as the policy shows');
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty($$select pg_temp.found(tests.recall('owner')::uuid)$$, 'another tenant''s admin finds nothing');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select pg_temp.found(tests.recall('owner')::uuid)$$,
    'a participant who reads one of the owner''s conversations does not search the owner''s messages'
);
select tests.authenticate_as_anon();
select throws_ok($$select pg_temp.found(tests.recall('owner')::uuid)$$, '42501', null, 'anon is refused');
select tests.authenticate_as_service_role();
select results_eq(
    $$select pg_temp.found(tests.recall('moved')::uuid)$$, $$select pg_temp.visible(tests.recall('moved')::uuid)$$,
    'the service role finds everything of the user it names'
);

select * from finish();
rollback;
