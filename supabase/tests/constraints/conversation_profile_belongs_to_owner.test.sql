-- A conversation's profile is one of its owner's profiles (23503 for anyone else's), so memory is
-- only ever made from the owner's own profile. Deleting the profile detaches the conversation
-- (profile_id null) and keeps it.
begin;
select plan(6);

select tests.create_cast('constraints-conv-profile');
with p as (
    insert into memory.profiles (user_id, name, is_primary) values
    (tests.recall('owner')::uuid, 'Owner main', true),
    (tests.recall('stranger')::uuid, 'Stranger main', true)
    returning user_id, id
)
select tests.remember(case when user_id = tests.recall('owner')::uuid then 'owner_profile' else 'stranger_profile' end, id)
from p;

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select memory.create_conversation(p_profile_id => tests.recall('stranger_profile')::uuid, p_window_turns => 1000)$$,
    '23503', null, 'a conversation with another user''s profile is refused'
);
select tests.remember(
    'conv', (memory.create_conversation(p_profile_id => tests.recall('owner_profile')::uuid, p_window_turns => 1000)).id
);
select results_eq(
    $$select profile_id from memory.conversations where id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('owner_profile')::uuid)$$,
    'a conversation with the owner''s profile is accepted'
);
select throws_ok(
    $$update memory.conversations set profile_id = tests.recall('stranger_profile')::uuid where id = tests.recall('conv')::uuid$$,
    '23503', null, 'switching to another user''s profile is refused'
);
select tests.authenticate_as_service_role();
select throws_ok(
    $$update memory.conversations set profile_id = tests.recall('stranger_profile')::uuid where id = tests.recall('conv')::uuid$$,
    '23503', null, 'service_role cannot attach another user''s profile either'
);

-- Deleting the profile detaches, and keeps, the conversation.
select tests.authenticate_as(tests.recall('owner')::uuid);
delete from memory.profiles where id = tests.recall('owner_profile')::uuid;
select results_eq(
    $$select id, profile_id from memory.conversations where id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('conv')::uuid, null::uuid)$$,
    'deleting the profile keeps the conversation without a profile'
);
select results_eq(
    $$select user_id from memory.conversations where id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('owner')::uuid)$$,
    'the conversation keeps its owner (only profile_id was set null)'
);

select * from finish();
rollback;
