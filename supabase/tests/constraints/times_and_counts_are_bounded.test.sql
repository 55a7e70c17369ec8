-- Times, durations and counters a caller sends are bounded where a client could not read them back
-- (past the year 9999, infinity) or the next write would overflow, each refused with a named
-- SQLSTATE and a message, nothing written: a memory's expiry, a conversation's and a short-term
-- ttl, an import's records (each bad one named, a value of the wrong type included). A memory's
-- reference count saturates instead of failing every later use.
begin;
select plan(17);

select tests.create_cast('bounded');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
select tests.authenticate_as(tests.recall('owner')::uuid);

select throws_ok($$select memory.remember('Likes tea', 'fact', p_expires_at => 'infinity')$$, '22023',
    'a memory expires in the future, at most 100 years away', 'an expiry at infinity is refused');
select throws_ok($$select memory.remember('Likes tea', 'fact', p_expires_at => now() - interval '1 minute')$$, '22023',
    null, 'so is one already past (the memory would never be seen)');
select throws_ok($$select memory.remember('Likes tea', 'fact', p_expires_at => now() + interval '101 years')$$, '22023',
    null, 'and one more than 100 years away');
select is((select outcome from memory.remember('Likes tea', 'fact', p_expires_at => now() + interval '1 day')), 'added',
    'a day away is taken');
select throws_ok($$select memory.create_conversation(p_ttl => interval '100000 years')$$, '23514',
    'ttl must be positive and at most 100 years', 'a conversation''s ttl past 100 years is refused');
select lives_ok($$select memory.create_conversation(p_ttl => interval '100 years')$$, '100 years is taken');
select throws_ok($$select memory.short_term_set('draft', '{}', interval '200000 years')$$, '22023',
    'ttl must be positive and at most 100 years', 'so is a short-term ttl');

-- An import's records: each bad one named, nothing written.
select tests.remember('before', (select count(*) from memory.memories where user_id = tests.recall('owner')::uuid));
create temporary table export_of (field text, value jsonb);
grant all on export_of to authenticated;
insert into export_of values
('reference_count', '2147483647'), ('created_at', '"20000-01-01"'), ('expires_at', '"infinity"'),
('origin_mode', to_jsonb(repeat('x', 101))), ('confidence', '"NaN"'), ('id', '"nope"');
create function pg_temp.export_with(p_field text, p_value jsonb) returns jsonb language sql as $$
    select jsonb_build_object('format', 'supamem.memories', 'version', 1, 'profiles', '[]'::jsonb, 'memories',
        jsonb_build_array(jsonb_build_object(
            'id', 'a7d3c1f0-0000-4000-8000-000000000001', 'profile_id', tests.recall('profile'), 'content', 'Keeps bees',
            'type', 'fact', 'confidence', 0.9, 'created_at', now() - interval '1 day'
        ) || jsonb_build_object(p_field, p_value)))
$$;
select throws_ok(format($$select memory.import_memories(pg_temp.export_with(%L, %L))$$, 'reference_count', '2147483647'),
    '22023', 'not a valid supamem memories export: memory a7d3c1f0-0000-4000-8000-000000000001: reference_count out of '
    || 'range (0..1,000,000)', 'a reference count the next use would overflow is refused, the record named');
select throws_ok(format($$select memory.import_memories(pg_temp.export_with(%L, %L))$$, 'created_at', '"20000-01-01"'),
    '22023', 'not a valid supamem memories export: memory a7d3c1f0-0000-4000-8000-000000000001: a time out of range '
    || '(from 1970 to now)', 'a creation time past the year 9999');
select throws_ok(format($$select memory.import_memories(pg_temp.export_with(%L, %L))$$, 'expires_at', '"infinity"'),
    '22023', 'not a valid supamem memories export: memory a7d3c1f0-0000-4000-8000-000000000001: expires_at out of range',
    'an expiry at infinity');
select throws_ok(format($$select memory.import_memories(pg_temp.export_with(%L, %L))$$, 'origin_mode', to_jsonb(repeat('x', 101))),
    '22023', null, 'an origin mode of 101 characters');
select throws_ok(format($$select memory.import_memories(pg_temp.export_with(%L, %L))$$, 'confidence', '"NaN"'),
    '22023', 'not a valid supamem memories export: memory a7d3c1f0-0000-4000-8000-000000000001: confidence out of '
    || 'range (0..1)', 'a confidence that is not a number');
select throws_ok(format($$select memory.import_memories(pg_temp.export_with(%L, %L))$$, 'id', '"nope"'),
    '22023', 'not a valid supamem memories export: invalid input syntax for type uuid: "nope"',
    'a value of the wrong type, with what was wrong');
select is((select count(*) from memory.memories where user_id = tests.recall('owner')::uuid),
    tests.recall('before')::bigint, 'none of them wrote anything');
select is(memory.import_memories(pg_temp.export_with('pinned', 'null')), 1, 'a missing flag takes its default');

-- A counter at the integer's top saturates: the next use is counted as none, not an error.
select tests.clear_authentication();
update memory.memories set reference_count = 2147483647 where id = 'a7d3c1f0-0000-4000-8000-000000000001';
select tests.authenticate_as(tests.recall('owner')::uuid);
select lives_ok($$select memory.mark_memories_used(null, array['a7d3c1f0-0000-4000-8000-000000000001'::uuid])$$,
    'a use of a memory at the top is no error');
select is((select reference_count from memory.memories where id = 'a7d3c1f0-0000-4000-8000-000000000001'), 2147483647,
    'and the count stays there');
select tests.clear_authentication();

select * from finish();
rollback;
