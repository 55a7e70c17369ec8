-- The retention cap (seed 004): at most memory_cap live memories per user and profile. Adding one
-- past the cap archives (never deletes) the lowest-scored unpinned memory, scored like selection:
-- weight x confidence / (1 + min(days since last reference, 30)) + 0.1 x reference count. Pinned
-- memories are never archived by the cap, so a write that would leave more pinned memories than
-- the cap is refused (54000). memory_cap is set to 3 for this file.
begin;
select plan(13);

update memory_private.settings set value = '3' where key = 'memory_cap';
select tests.remember('u', memory.user_id_for('memories-caps.u'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Main', true) returning id)
select tests.remember('p', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Work', false) returning id)
select tests.remember('q', id) from p;

-- Three memories whose scores the cap must compute, not guess from confidence alone:
--   a: fact 0.9, last referenced 29 days ago        -> 1.0 x 0.9 / 30     = 0.03  (lowest)
--   b: fact 0.3, referenced 10 times just now       -> 1.0 x 0.3 / 1 + 1.0 = 1.30
--   c: goal 0.8, new                                -> 1.5 x 0.8          = 1.20
select tests.authenticate_as_service_role();
select tests.remember('a', (select memory_id from memory.remember('I commute by train', 'fact', tests.recall('u')::uuid, p_confidence => 0.9)));
select tests.remember('b', (select memory_id from memory.remember('I am left-handed', 'fact', tests.recall('u')::uuid, p_confidence => 0.3)));
select tests.remember('c', (select memory_id from memory.remember('I want to learn Korean', 'goal', tests.recall('u')::uuid, p_confidence => 0.8)));
-- Counters are set by the table owner: no API role may write them.
select tests.clear_authentication();
update memory.memories set last_referenced_at = now() - interval '29 days' where id = tests.recall('a')::uuid;
update memory.memories set reference_count = 10, last_referenced_at = now() where id = tests.recall('b')::uuid;
select tests.authenticate_as_service_role();

select results_eq(
    $$select count(*)::integer, count(*) filter (where archived)::integer from memory.memories where user_id = tests.recall('u')::uuid$$,
    $$values (3, 0)$$,
    'at the cap (3), nothing is archived'
);

-- d: pattern 0.9, new -> 1.35. The 4th live memory archives the lowest-scored one (a).
select results_eq(
    $$select outcome from memory.remember('I journal every night', 'pattern', tests.recall('u')::uuid, p_confidence => 0.9)$$,
    $$values ('added')$$,
    'the 4th memory is added'
);
select tests.remember('d', (select id from memory.memories where content = 'I journal every night' and user_id = tests.recall('u')::uuid));
select results_eq(
    $$select archived, active, deleted_at from memory.memories where id = tests.recall('a')::uuid$$,
    $$values (true, true, null::timestamptz)$$,
    'the lowest-scored memory is archived, not deleted'
);
select results_eq(
    $$select id from memory.memories where user_id = tests.recall('u')::uuid and not archived order by id$$,
    $$select unnest(array[tests.recall('b')::uuid, tests.recall('c')::uuid, tests.recall('d')::uuid]) as id order by id$$,
    'the others stay live, including the low-confidence memory its references keep up'
);
select results_eq(
    $$select event, actor_role from memory.memory_events where memory_id = tests.recall('a')::uuid and event = 'archive'$$,
    $$values ('archive', 'service_role')$$,
    'the cap''s archiving is in the history'
);

-- Pinned memories are never archived by the cap: pin c (now the lowest at 1.20) and add
-- e (goal 1.0 -> 1.50); the lowest unpinned (b at 1.30) goes instead.
select memory.pin_memory(tests.recall('c')::uuid);
select results_eq(
    $$select outcome from memory.remember('I want to visit Japan', 'goal', tests.recall('u')::uuid, p_confidence => 1.0)$$,
    $$values ('added')$$,
    'a memory past the cap is added'
);
select results_eq(
    $$select id, archived from memory.memories where id in (tests.recall('b')::uuid, tests.recall('c')::uuid) order by id = tests.recall('c')::uuid$$,
    $$values (tests.recall('b')::uuid, true), (tests.recall('c')::uuid, false)$$,
    'the lowest-scored unpinned memory is archived, the lower-scored pinned one stays'
);

-- With every live memory pinned, the cap archives none of them, and a pinned newcomer that would
-- go past it is refused: the cap holds for pinned memories too.
update memory.memories set pinned = true where user_id = tests.recall('u')::uuid and not archived;
select throws_ok(
    $$select * from memory.remember('I keep a bonsai', 'fact', tests.recall('u')::uuid, p_pinned => true)$$,
    '54000', 'memory cap reached: every live memory is pinned',
    'a pinned memory past the cap is refused'
);
select results_eq(
    $$select outcome from memory.remember('I keep a cactus', 'fact', tests.recall('u')::uuid)$$,
    $$values ('archived: memory cap reached')$$,
    'an unpinned memory past the cap is stored archived'
);
select results_eq(
    $$select count(*)::integer, bool_and(pinned) from memory.memories where user_id = tests.recall('u')::uuid and not archived$$,
    $$values (3, true)$$,
    'three pinned memories stay live under a cap of three; nothing was archived for the refused one'
);
update memory.memories set pinned = true where id = tests.recall('a')::uuid;
select throws_ok(
    $$select memory.unarchive_memory(tests.recall('a')::uuid)$$,
    '54000', null, 'bringing a pinned archived memory back past the cap is refused too'
);

-- The cap counts per profile: the other profile has room of its own.
select results_eq(
    $$select outcome from memory.remember('I use a standing desk', 'fact', tests.recall('u')::uuid, tests.recall('q')::uuid)$$,
    $$values ('added')$$,
    'a memory on another profile is added'
);
select results_eq(
    $$select profile_id = tests.recall('q')::uuid, count(*)::integer from memory.memories
    where user_id = tests.recall('u')::uuid and not archived group by 1 order by 1$$,
    $$values (false, 3), (true, 1)$$,
    'it archives nothing on the full profile, which keeps its three'
);

select * from finish();
rollback;
