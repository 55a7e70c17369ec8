-- memory_private.memory_selections: each profile's candidates for selection and the bound no other
-- live memory outranks unless a note names it. A new profile's candidates are all of its memories;
-- the refresh keeps every pinned memory and the best 2 x memory_select_limit, with the best left out
-- as the bound and the time the candidates stop proving a selection; every write that could lift a
-- memory notes it (memory_private.memory_selection_notes), a candidate that leaves or scores less
-- is noted as a fall, which makes the selection due, and a type's new weight leaves every built
-- selection unproven. select_memories falls back to every live memory whenever the candidates and
-- notes cannot prove its answer. Readers of the profile read both; nobody writes them but the kit.
begin;
select plan(48);

select tests.create_cast('memory-selections');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
with p as (insert into memory.profiles (user_id, name) values (tests.recall('owner')::uuid, 'Work') returning id)
select tests.remember('q', id) from p;

create function pg_temp.selection(p_profile text)
returns memory_private.memory_selections
language sql
as $$ select s from memory_private.memory_selections as s where s.profile_id = tests.recall(p_profile)::uuid $$;

-- The memories a selection can choose from: its candidates and the memories noted since.
create function pg_temp.pool(p_profile text)
returns uuid []
language sql
as $$
    select s.candidates || array(
        select n.memory_id from memory_private.memory_selection_notes as n
        where n.profile_id = s.profile_id and n.memory_id is not null
    )
    from memory_private.memory_selections as s where s.profile_id = tests.recall(p_profile)::uuid
$$;

-- A candidate left or fell since the build.
create function pg_temp.fell(p_profile text)
returns boolean
language sql
as $$
    select exists (
        select 1 from memory_private.memory_selection_notes as n
        where n.profile_id = tests.recall(p_profile)::uuid and n.memory_id is null
    )
$$;

create function pg_temp.memory(p_content text)
returns uuid
language sql
as $$ select m.id from memory.memories as m where m.content = p_content and m.user_id = tests.recall('owner')::uuid $$;

create function pg_temp.named(p_ids uuid [])
returns text []
language sql
as $$ select array(select distinct m.content from memory.memories as m where m.id = any(p_ids) order by m.content) $$;

select is(
    (select row(s.candidates, s.bound, s.stale_at)::text from pg_temp.selection('p') as s),
    row('{}'::uuid [], null::numeric, 'infinity'::timestamptz)::text,
    'a new profile''s candidates are all of its memories: none yet'
);

-- Selections of 2: the refresh keeps the best 4. Memory mN scores 0.N (facts weigh 1, referenced now).
update memory_private.settings set value = '2' where key = 'memory_select_limit';
insert into memory.memories (user_id, profile_id, content, type, confidence, last_referenced_at)
select tests.recall('owner')::uuid, tests.recall('p')::uuid, 'm' || i, 'fact', i / 10.0, now()
from generate_series(1, 8) as i;
select is(
    pg_temp.named(pg_temp.pool('p')), array['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'],
    'while the candidates are all memories, every new one is noted'
);
select ok(
    (select count(*) from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid) > 4,
    'and more notes than a build keeps candidates make the selection due, to keep the best'
);

-- anon, signed-in users and the service role outside the kit cannot run a refresh.
select tests.authenticate_as_anon();
select throws_ok($$select memory_private.refresh_memory_selections()$$, '42501', null, 'anon cannot refresh');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok($$select memory_private.refresh_memory_selections()$$, '42501', null, 'the owner cannot refresh');
select throws_ok(
    $$select memory_private.refresh_memory_selection(tests.recall('p')::uuid)$$, '42501', null,
    'nor build one selection'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok($$select memory_private.refresh_memory_selections()$$, '42501', null, 'a stranger cannot refresh');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok($$select memory_private.refresh_memory_selections()$$, '42501', null, 'a tenant admin cannot refresh');
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory_private.refresh_memory_selection(tests.recall('p')::uuid)$$, '42501', null,
    'the service role builds selections only through the scheduled refresh'
);
select throws_ok(
    $$select memory_private.refresh_memory_selections(0)$$, '22023', 'limit must be positive',
    'a refresh of no selections is refused'
);
select ok(memory_private.refresh_memory_selections(100000) >= 1, 'the service role runs the refresh');
select tests.clear_authentication();

select is(
    pg_temp.named(pg_temp.pool('p')), array['m5', 'm6', 'm7', 'm8'],
    'the refresh keeps the best 2 x memory_select_limit'
);
select is(
    ((pg_temp.selection('p')).bound, (pg_temp.selection('p')).bound_id), (0.4, pg_temp.memory('m4')),
    'and the best left out is the bound'
);
-- A candidate scoring c falls to 0.4 after c / 0.4 - 1 days: m8 in 1 day, m7 in 18 hours. A
-- selection of 2 is proven while two of them score above the bound.
select is((pg_temp.selection('p')).stale_at, now() + interval '18 hours', 'due when the second best falls to the bound');
select is(
    (pg_temp.selection('q')).stale_at, 'infinity'::timestamptz,
    'a selection holding every memory of its profile is never due by time'
);

-- The selection answers as every live memory would.
select is(
    array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid) as s),
    array['m8', 'm7'], 'select_memories picks the best two from the candidates'
);
select is(
    array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid, p_limit => 6) as s),
    array['m8', 'm7', 'm6', 'm5', 'm4', 'm3'], 'a selection larger than the candidates reads every live memory'
);
select tests.remember('built', (pg_temp.selection('p')).candidates);
update memory_private.memory_selections set candidates = array[pg_temp.memory('m8'), pg_temp.memory('m5')], bound = 0.75
where profile_id = tests.recall('p')::uuid;
select is(
    array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid) as s),
    array['m8', 'm7'], 'candidates that cannot prove the answer (m5 under the bound) give way to every live memory'
);
update memory_private.memory_selections set candidates = tests.recall('built')::uuid [], bound = 0.4
where profile_id = tests.recall('p')::uuid;
-- The query 'm4' lifts m4, left out of the candidates, to about 0.8.
select tests.remember(
    'lifted', array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid, 'm4', p_limit => 3) as s)
);
update memory_private.memory_selections set bound = 'Infinity' where profile_id = tests.recall('p')::uuid;
select is(
    array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid, 'm4', p_limit => 3) as s)::text,
    tests.recall('lifted'), 'a memory the query lifts is scored with the candidates: the answer every live memory gives'
);
select ok('m4' = any(tests.recall('lifted')::text []), 'and the lift counts');
update memory_private.memory_selections set bound = 0.4 where profile_id = tests.recall('p')::uuid;

-- Writes that could lift a memory past the bound add it.
insert into memory.memories (user_id, profile_id, content, type, confidence, last_referenced_at) values
(tests.recall('owner')::uuid, tests.recall('p')::uuid, 'm45', 'fact', 0.45, now()),
(tests.recall('owner')::uuid, tests.recall('p')::uuid, 'm35', 'fact', 0.35, now());
insert into memory.memories (id, user_id, profile_id, content, type, confidence, last_referenced_at) values
('00000000-0000-4000-8000-000000000001', tests.recall('owner')::uuid, tests.recall('p')::uuid, 'tie first', 'fact', 0.4, now()),
('ffffffff-ffff-4fff-bfff-ffffffffffff', tests.recall('owner')::uuid, tests.recall('p')::uuid, 'tie last', 'fact', 0.4, now());
select is(
    pg_temp.named(pg_temp.pool('p')), array['m35', 'm45', 'm5', 'm6', 'm7', 'm8', 'tie first', 'tie last'],
    'every new memory is noted, to be chosen from until the next build'
);
update memory.memories set pinned = true where id = pg_temp.memory('m1');
update memory.memories set reference_count = 3 where id = pg_temp.memory('m2');
select is(
    pg_temp.named(pg_temp.pool('p')),
    array['m1', 'm2', 'm35', 'm45', 'm5', 'm6', 'm7', 'm8', 'tie first', 'tie last'],
    'so is a memory pinned or reinforced'
);
update memory.memories set archived = true where id = pg_temp.memory('m35');
select is(pg_temp.fell('p'), false, 'archiving a memory that is no candidate notes no fall');
update memory.memories set reference_count = reference_count + 1 where id = pg_temp.memory('m8');
select is(pg_temp.fell('p'), false, 'nor does reinforcing a candidate');
update memory.memories set confidence = 0.75 where id = pg_temp.memory('m8');
select ok(pg_temp.fell('p'), 'a candidate scoring less is noted as a fall');
delete from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid and memory_id is null;
update memory.memories set archived = true where id = pg_temp.memory('m7');
select ok(pg_temp.fell('p'), 'so is a candidate archived');
delete from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid and memory_id is null;
update memory.memories set profile_id = tests.recall('q')::uuid where id = pg_temp.memory('m6');
select ok(pg_temp.fell('p'), 'or moved to another profile');
select is(pg_temp.named(pg_temp.pool('q')), array['m6'], 'which notes it among its own');
delete from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid and memory_id is null;
delete from memory.memories where id = pg_temp.memory('m5');
select ok(pg_temp.fell('p'), 'or deleted');
select is(
    (select count(*)::integer from memory_private.memory_selections
    where profile_id = tests.recall('p')::uuid
        and profile_id in (
            select n.profile_id from memory_private.memory_selection_notes as n where n.memory_id is null
        )),
    1, 'a fall makes the selection due'
);
select is(
    array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid, p_limit => 4) as s),
    array['m1', 'm8', 'm2', 'm45'], 'and the selection is still exact before the refresh'
);

-- A type's new weight can lift any memory: built selections are unproven until rebuilt.
select memory_private.refresh_memory_selections(100000);
update memory.memory_types set weight = weight where type = 'emotion';
select is(
    ((pg_temp.selection('p')).bound, (pg_temp.selection('q')).bound), ('Infinity'::numeric, null::numeric),
    'a weight change leaves built selections unproven, and a selection of every memory as it is'
);
select ok((pg_temp.selection('p')).stale_at <= now(), 'and due for a refresh');
select is(
    array(select s.content from memory.select_memories(tests.recall('owner')::uuid, tests.recall('p')::uuid) as s),
    array['m1', 'm8'], 'an unproven selection reads every live memory'
);

-- Readers of the profile read its selection and its notes; nobody writes them.
insert into memory.memories (user_id, profile_id, content, type, confidence, last_referenced_at)
values (tests.recall('owner')::uuid, tests.recall('p')::uuid, 'm9', 'fact', 0.9, now());
select tests.authenticate_as_anon();
select throws_ok($$select * from memory_private.memory_selections$$, '42501', null, 'anon cannot read selections');
select throws_ok($$select * from memory_private.memory_selection_notes$$, '42501', null, 'nor their notes');
select tests.authenticate_as(tests.recall('owner')::uuid);
select isnt_empty(
    $$select 1 from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid$$,
    'the owner reads the notes of their profile'
);
select throws_ok(
    $$insert into memory_private.memory_selection_notes (profile_id) values (tests.recall('p')::uuid)$$,
    '42501', null, 'and cannot write one'
);
select results_eq(
    $$select profile_id from memory_private.memory_selections order by profile_id$$,
    $$select id from memory.profiles where user_id = tests.recall('owner')::uuid order by id$$,
    'the owner reads the selections of their profiles'
);
select throws_ok(
    $$update memory_private.memory_selections set bound = null$$, '42501', null, 'the owner cannot change a selection'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select 1 from memory_private.memory_selections where profile_id = tests.recall('p')::uuid$$,
    'a stranger reads no selection of the owner'
);
select is_empty(
    $$select 1 from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid$$,
    'nor its notes'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select isnt_empty(
    $$select 1 from memory_private.memory_selections where profile_id = tests.recall('p')::uuid$$,
    'the tenant''s admin reads the owner''s selection'
);
select isnt_empty(
    $$select 1 from memory_private.memory_selection_notes where profile_id = tests.recall('p')::uuid$$,
    'and its notes'
);
select tests.authenticate_as(tests.recall('admin_b')::uuid);
select is_empty(
    $$select 1 from memory_private.memory_selections where profile_id = tests.recall('p')::uuid$$,
    'another tenant''s admin does not'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$delete from memory_private.memory_selections$$, '42501', null, 'the service role cannot change a selection'
);
select throws_ok(
    $$delete from memory_private.memory_selection_notes$$, '42501', null, 'nor its notes'
);
select tests.clear_authentication();

delete from memory.profiles where id = tests.recall('q')::uuid;
select is(pg_temp.selection('q'), null, 'a deleted profile takes its selection with it');

select * from finish();
rollback;
