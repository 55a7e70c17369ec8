-- A user's vector lists (memory_private.vector_lists): a user past vector_lists_from is due a
-- build; the build gives ceil(sqrt(vectors)) centres, splits a list crowded past twice its share,
-- and lists every vector once, in the list of its nearest centre; a vector stored, changed, refused or deleted afterwards follows; search by
-- meaning over the history reads the nearest lists when they cost less than the other scans, and
-- answers exactly when they come back short. Three-dimensional vectors under a test model, in four
-- tight bundles (one per axis and one diagonal), 25 each.
begin;
select plan(26);

select tests.create_cast('vector-lists');
select tests.authenticate_as_service_role();
select memory.set_embedding_model('test-3d', 3);
select tests.clear_authentication();
update memory_private.settings set value = '60' where key = 'vector_lists_from';
-- The other scans priced out, so the lists are read whenever built.
update memory_private.settings set value = '1000000' where key = 'hnsw_visit_cost';

select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Bundles', p_window_turns => 1000)).id);
select count(memory.add_message(tests.recall('conv')::uuid, 'user', 'turn ' || i)) from generate_series(1, 100) as i;

create temporary table bundle (b integer, direction float8[]) on commit drop;
insert into bundle values (0, '{1,0,0}'), (1, '{0,1,0}'), (2, '{0,0,1}'), (3, '{1,1,1}');
insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
select m.id, m.user_id, 'test-3d', (
    select format('[%s, %s, %s]', d.direction[1] + (m.turn_number % 5) / 100.0, d.direction[2], d.direction[3])
    from bundle as d where d.b = m.turn_number % 4
)::extensions.vector
from memory.messages as m
where m.conversation_id = tests.recall('conv')::uuid;
select memory_private.fold_search_terms(2147483647);

select isnt(
    (select l.wanted_at from memory_private.vector_lists as l where l.user_id = tests.recall('owner')::uuid),
    null,
    'a user past vector_lists_from is due a build of their lists'
);
select tests.remember('bare', (memory.create_conversation(tests.recall('stranger')::uuid, 'No vectors')).id);
select count(memory.add_message(tests.recall('bare')::uuid, 'user', 'plain ' || i)) from generate_series(1, 100) as i;
select memory_private.fold_search_terms(2147483647);
select is_empty(
    format('select 1 from memory_private.vector_lists where user_id = %L', tests.recall('stranger')),
    'a user without vectors of the model is never due lists'
);
select is(
    (select count(*)::integer from memory_private.vector_list_entries where user_id = tests.recall('owner')::uuid),
    0,
    'nothing is listed before the build'
);

-- The build draws its sample at random: the same draw on every run.
select setseed(0.25);
select tests.authenticate_as_service_role();
select tests.remember('lists', memory_private.build_vector_lists(tests.recall('owner')::uuid, 'test-3d'));
select ok(
    tests.recall('lists')::integer between 10 and 20,
    'ceil(sqrt(100)) lists, and one more for each crowded list split'
);
select tests.clear_authentication();
select is(
    (select (l.lists, cardinality(l.centroids), l.messages, l.wanted_at is null)::text
    from memory_private.vector_lists as l where l.user_id = tests.recall('owner')::uuid),
    format('(%s,%s,100,t)', tests.recall('lists'), tests.recall('lists')),
    'the build records its lists and the messages it was built for, and is no longer due'
);
-- A bundle of 25 drawing one centre is crowded (20 is twice a list's share of 100); the x axis's
-- bundle is one direction five times over, which no split can part.
select is_empty(
    $$select x.list_no from memory_private.vector_list_entries as x
    where x.user_id = tests.recall('owner')::uuid
    group by x.list_no
    having count(*) > 20 and count(distinct extensions.l2_normalize(x.embedding)::text) > 1$$,
    'no list holds more than twice its share, unless its vectors share one direction (the x bundle)'
);
select set_eq(
    format('select message_id from memory_private.vector_list_entries where user_id = %L', tests.recall('owner')),
    format('select message_id from memory_private.message_embeddings where user_id = %L', tests.recall('owner')),
    'every vector is listed once'
);
select is_empty(
    $$select 1 from memory_private.vector_list_entries as x
    join memory_private.vector_lists as l on l.user_id = x.user_id and l.model = x.model
    where x.list_no <> (memory_private.nearest_centroids(l.centroids, x.embedding))[1]$$,
    'each in the list of its nearest centre'
);

-- Through the lists, one list read: the nearest five, as the exact scan of the conversation finds them.
update memory_private.settings set value = '1' where key = 'vector_list_probes';
select tests.authenticate_as_service_role();
select tests.remember('exact', array(
    select v.message_id from memory_private.vector_messages(
        tests.recall('owner')::uuid, '[0.1, 1, 0]', tests.recall('conv')::uuid, 5
    ) as v
)::text);
select is(
    array(select v.message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[0.1, 1, 0]', null, 5) as v),
    tests.recall('exact')::bigint[],
    'search over the history through the nearest list finds the nearest five'
);
-- Every copy made alike: the list's first five by id, where the messages' own vectors would differ.
select tests.clear_authentication();
update memory_private.vector_list_entries set embedding = '[0, 1, 0]' where user_id = tests.recall('owner')::uuid;
select tests.authenticate_as_service_role();
select is(
    array(select v.message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[0.1, 1, 0]', null, 5) as v),
    array(
        select x.message_id
        from memory_private.vector_list_entries as x
        join memory_private.vector_lists as l on l.user_id = x.user_id and l.model = x.model
        where x.user_id = tests.recall('owner')::uuid and x.list_no = (memory_private.nearest_centroids(l.centroids, '[0.1, 1, 0]'))[1]
        order by x.message_id
        limit 5
    ),
    'it compares the copies in the nearest list, not the messages'' vectors'
);
select tests.clear_authentication();
update memory_private.settings set value = '1000' where key = 'vector_list_probes';
select tests.authenticate_as_service_role();
select is(
    array(select v.message_id from memory_private.vector_messages(tests.recall('owner')::uuid, '[0.1, 1, 0]', null, 5) as v),
    tests.recall('exact')::bigint[],
    'lists that would cost more than the exact scan are not read'
);
select tests.clear_authentication();
update memory_private.settings set value = '1' where key = 'vector_list_probes';
select tests.authenticate_as_service_role();
select is(
    (select count(*)::integer from memory_private.vector_messages(tests.recall('owner')::uuid, '[0.1, 1, 0]', null, 60)),
    60,
    'lists that hold fewer than asked for are answered by the exact scan'
);
select tests.clear_authentication();

-- Written after the build: listed by its nearest centre, moved when it changes, dropped with it.
select tests.remember('late', (memory.add_message(tests.recall('conv')::uuid, 'user', 'late')).id);
insert into memory_private.message_embeddings (message_id, user_id, model, embedding)
values (tests.recall('late')::bigint, tests.recall('owner')::uuid, 'test-3d', '[0, 0, 1]');
select is(
    (select x.list_no from memory_private.vector_list_entries as x where x.message_id = tests.recall('late')::bigint),
    (select (memory_private.nearest_centroids(l.centroids, '[0, 0, 1]'))[1]
    from memory_private.vector_lists as l where l.user_id = tests.recall('owner')::uuid),
    'a vector stored after the build joins the list of its nearest centre'
);
update memory_private.message_embeddings set embedding = '[1, 0, 0]' where message_id = tests.recall('late')::bigint;
select is(
    (select (x.list_no, x.embedding::text)::text from memory_private.vector_list_entries as x
    where x.message_id = tests.recall('late')::bigint),
    (select ((memory_private.nearest_centroids(l.centroids, '[1, 0, 0]'))[1], '[1,0,0]')::text
    from memory_private.vector_lists as l where l.user_id = tests.recall('owner')::uuid),
    'a changed vector moves to the list of its new nearest centre'
);
update memory_private.message_embeddings set embedding = null, refused = 'too long'
where message_id = tests.recall('late')::bigint;
select is_empty(
    format('select 1 from memory_private.vector_list_entries where message_id = %s', tests.recall('late')),
    'a refusal leaves the lists'
);
update memory_private.message_embeddings set embedding = '[0, 1, 0]', refused = null
where message_id = tests.recall('late')::bigint;
delete from memory.messages where id = tests.recall('late')::bigint;
select is_empty(
    format('select 1 from memory_private.vector_list_entries where message_id = %s', tests.recall('late')),
    'a deleted message leaves the lists with its vector'
);

-- Built again when the messages double; no lists below vector_lists_from.
select count(memory.add_message(tests.recall('conv')::uuid, 'user', 'more ' || i)) from generate_series(1, 99) as i;
select memory_private.fold_search_terms(2147483647);
select is(
    (select l.wanted_at from memory_private.vector_lists as l where l.user_id = tests.recall('owner')::uuid),
    null,
    'short of twice the messages of the build, none is due'
);
select count(memory.add_message(tests.recall('conv')::uuid, 'user', 'more')) from generate_series(1, 2) as i;
select memory_private.fold_search_terms(2147483647);
select isnt(
    (select l.wanted_at from memory_private.vector_lists as l where l.user_id = tests.recall('owner')::uuid),
    null,
    'a user whose messages doubled since the build is due another'
);
update memory_private.settings set value = '1000' where key = 'vector_lists_from';
select tests.authenticate_as_service_role();
select is(
    memory_private.build_vector_lists(tests.recall('owner')::uuid, 'test-3d'), 0, 'below vector_lists_from: no lists'
);
select tests.clear_authentication();
select is(
    (select count(lists)::integer from memory_private.vector_lists where user_id = tests.recall('owner')::uuid)
    + (select count(*)::integer from memory_private.vector_list_entries where user_id = tests.recall('owner')::uuid),
    0,
    'the lists and their entries are gone'
);
select is(
    (select (l.messages, l.wanted_at is null)::text from memory_private.vector_lists as l
    where l.user_id = tests.recall('owner')::uuid),
    '(201,t)',
    'the user is kept without lists, due again when the messages double'
);

-- A new model: users with lists are due lists of it, and their build drops the old model's.
update memory_private.settings set value = '60' where key = 'vector_lists_from';
select tests.authenticate_as_service_role();
select ok(
    memory_private.build_vector_lists(tests.recall('owner')::uuid, 'test-3d') between 10 and 20,
    'built again from its 100 vectors'
);
select memory.set_embedding_model('test-3d-next', 3);
select tests.clear_authentication();
select isnt(
    (select l.wanted_at from memory_private.vector_lists as l
    where l.user_id = tests.recall('owner')::uuid and l.model = 'test-3d-next'),
    null,
    'after a model change a user with lists is due lists of the new model'
);
select tests.authenticate_as_service_role();
select is(
    memory_private.build_vector_lists(tests.recall('owner')::uuid, 'test-3d-next'), 0,
    'none before the new model''s vectors are there'
);
select tests.clear_authentication();
select is(
    (select array_agg(l.model || ':' || (l.wanted_at > now())::text) from memory_private.vector_lists as l
    where l.user_id = tests.recall('owner')::uuid)
    || (select count(*)::text from memory_private.vector_list_entries as x where x.user_id = tests.recall('owner')::uuid),
    array['test-3d-next:true', '0'],
    'the old model''s lists and copies are gone; the new model''s are due again once its vectors catch up'
);
select memory.set_embedding_model('test-3d', 3);

update memory_private.settings set value = '0' where key = 'vector_list_probes';
select tests.authenticate_as_service_role();
select throws_ok(
    $$select * from memory_private.vector_messages(tests.recall('owner')::uuid, '[1, 0, 0.5]')$$,
    '22023', 'setting vector_list_probes must be a number of at least 1',
    'vector_list_probes below 1 is refused'
);

select * from finish();
rollback;
