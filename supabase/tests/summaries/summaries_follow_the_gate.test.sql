-- Weekly and monthly summaries are long-term memory: a conversation summary feeds them (it is
-- tagged with its profile) only when the conversation's profile is the owner's primary profile,
-- "Remember in this chat" is on and the owner has not paused memory. Otherwise it is kept for
-- the conversation's own context, untagged, and the weekly scheduler never sees it.
begin;
select plan(9);

update memory_private.settings set value = '4' where key = 'summary_interval';
update memory_private.settings set value = '["summarize_conversation", "summarize_week"]' where key = 'job_kinds';
select tests.create_cast('summaries-gate');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id
)
select tests.remember('main', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Friend', false) returning id
)
select tests.remember('side', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Main', true) returning id
)
select tests.remember('paused_main', id) from p;
update memory.users set memory_paused = true where id = tests.recall('stranger')::uuid;

-- One conversation per row of the gate, four turns each (one summary job each).
create temporary table gate_case (name text primary key, conversation_id uuid, job_id bigint) on commit drop;
grant select on gate_case to service_role;
insert into gate_case (name, conversation_id) values
('open', (memory.create_conversation(tests.recall('owner')::uuid, null, 'profile', tests.recall('main')::uuid)).id),
('remember off', (memory.create_conversation(tests.recall('owner')::uuid, null, 'profile', tests.recall('main')::uuid, p_remember => false)).id),
('swiss', (memory.create_conversation(tests.recall('owner')::uuid, null, 'swiss', tests.recall('main')::uuid)).id),
('secondary profile', (memory.create_conversation(tests.recall('owner')::uuid, null, 'profile', tests.recall('side')::uuid)).id),
('generic chat', (memory.create_conversation(tests.recall('owner')::uuid, null, 'chat')).id),
('paused', (memory.create_conversation(tests.recall('stranger')::uuid, null, 'profile', tests.recall('paused_main')::uuid)).id);
select memory.add_turn(g.conversation_id, 'Question ' || i, 'Answer ' || i) from gate_case as g, generate_series(1, 4) as i;
select memory_private.queue_pending_summaries();
update gate_case as g set job_id = j.id
from memory_private.jobs as j
where j.kind = 'summarize_conversation' and j.dedup_key = 'conversation:' || g.conversation_id || ':4';
update memory_private.jobs set status = 'running', attempts = attempts + 1, worker = 'gate-worker', started_at = now(),
    leased_until = now() + interval '5 minutes'
where id in (select job_id from gate_case);

select tests.authenticate_as_service_role();
select memory.finish_conversation_summary(g.job_id, 'gate-worker', 'Summary of ' || g.name) from gate_case as g;
select tests.clear_authentication();

select is(
    (select count(*)::integer from memory.conversation_summaries as s join gate_case as g using (conversation_id)), 6,
    'every conversation keeps its summary for its own context'
);
select is(
    (select s.profile_id from memory.conversation_summaries as s join gate_case as g using (conversation_id) where g.name = 'open'),
    tests.recall('main')::uuid,
    'an open gate tags the summary with the primary profile'
);
select is(s.profile_id, null, format('%s: the summary is not tagged', g.name))
from gate_case as g inner join memory.conversation_summaries as s using (conversation_id)
where g.name <> 'open'
order by g.name;

-- The weekly scheduler sees only the tagged one.
update memory.conversation_summaries set created_at = now() - interval '14 days'
where conversation_id in (select conversation_id from gate_case);
select memory_private.enqueue_due_weekly_summaries();
select results_eq(
    $$select j.payload ->> 'profile_id' from memory_private.jobs as j
    where j.kind = 'summarize_week' and j.user_id in (tests.recall('owner')::uuid, tests.recall('stranger')::uuid)$$,
    $$values (tests.recall('main'))$$,
    'only the open conversation''s profile gets a weekly summary'
);

-- Regenerating after the user turned remember off untags the summary.
update memory.conversations set remember = false
where id = (select conversation_id from gate_case where name = 'open');
update memory_private.jobs set status = 'running', worker = 'gate-worker', leased_until = now() + interval '5 minutes'
where id = (select job_id from gate_case where name = 'open');
select tests.authenticate_as_service_role();
select memory.finish_conversation_summary((select job_id from gate_case where name = 'open'), 'gate-worker', 'Regenerated');
select tests.clear_authentication();
select is(
    (select s.profile_id from memory.conversation_summaries as s join gate_case as g using (conversation_id) where g.name = 'open'),
    null,
    'a summary regenerated after remember was turned off is untagged'
);

select * from finish();
rollback;
