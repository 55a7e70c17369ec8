-- memory_private.lexical_memories (the lexical side of search_memories, search_messages and the
-- query's lift in select_memories) runs as the owner, so all its callers share one plan; what it
-- ranks is held here to what the memories policy shows each caller: the owner and their tenant's
-- admin rank what they read, the service role every memory of the user it names, a stranger and
-- another tenant's admin nothing of the owner's, anon is refused; an admin never ranks a memory
-- outside the tenants they administer (a user moved into a tenant keeps older memories outside it).
begin;
select plan(12);

select tests.create_cast('memory-search-access');
select memory.remember(format('Kayak trip number %s', i), 'fact', p_user_id => tests.recall('owner')::uuid)
from generate_series(1, 3) as i;
select memory.remember('Kayak lessons on Sundays', 'fact', p_user_id => tests.recall('stranger')::uuid);
-- A user without a tenant remembers, then joins tenant A.
select tests.remember('moved', tests.create_auth_user('memory-search-access.moved@supamem.test'));
insert into memory.users (id, auth_user_id) values (tests.recall('moved')::uuid, tests.recall('moved')::uuid);
select memory.remember('Kayak rental before the move', 'fact', p_user_id => tests.recall('moved')::uuid);
update memory.users set tenant_id = tests.recall('tenant_a')::uuid where id = tests.recall('moved')::uuid;

-- What the memories policy shows the current caller of a user's kayak memories.
create function pg_temp.visible(p_user uuid) returns setof uuid language sql as $$
    select m.id from memory.memories as m
    where m.user_id = p_user and m.search @@ to_tsquery('english', 'kayak') and m.deleted_at is null
    order by m.id
$$;
create function pg_temp.ranked(p_user uuid) returns setof uuid language sql as $$
    select l.memory_id from memory_private.lexical_memories(p_user, 'kayak', null) as l order by l.memory_id
$$;

select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select pg_temp.ranked(tests.recall('owner')::uuid)$$, $$select pg_temp.visible(tests.recall('owner')::uuid)$$,
    'the owner ranks what they read'
);
select is((select count(*)::integer from pg_temp.ranked(tests.recall('owner')::uuid)), 3, 'their three kayak memories');
select is(
    (select count(*)::integer from memory.search_memories('kayak')), 3,
    'search_memories finds the owner''s own through it'
);
select is_empty(
    $$select pg_temp.ranked(tests.recall('stranger')::uuid)$$, 'the owner ranks nothing of another user''s'
);

select tests.authenticate_as(tests.recall('admin_a')::uuid);
select results_eq(
    $$select pg_temp.ranked(tests.recall('owner')::uuid)$$, $$select pg_temp.visible(tests.recall('owner')::uuid)$$,
    'the owner''s tenant admin ranks what they read of the owner''s'
);
select is((select count(*)::integer from pg_temp.ranked(tests.recall('owner')::uuid)), 3, 'all three');
select is_empty(
    $$select pg_temp.ranked(tests.recall('moved')::uuid)$$,
    'nothing a user remembered before joining the admin''s tenant'
);
select is_empty($$select pg_temp.visible(tests.recall('moved')::uuid)$$, 'as the policy shows');

select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty($$select pg_temp.ranked(tests.recall('owner')::uuid)$$, 'another tenant''s admin ranks nothing');

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty($$select pg_temp.ranked(tests.recall('owner')::uuid)$$, 'a stranger ranks nothing of the owner''s');

select tests.authenticate_as_anon();
select throws_ok($$select pg_temp.ranked(tests.recall('owner')::uuid)$$, '42501', null, 'anon is refused');

select tests.authenticate_as_service_role();
select results_eq(
    $$select pg_temp.ranked(tests.recall('moved')::uuid)$$, $$select pg_temp.visible(tests.recall('moved')::uuid)$$,
    'the service role ranks every memory of the user it names'
);

select * from finish();
rollback;
