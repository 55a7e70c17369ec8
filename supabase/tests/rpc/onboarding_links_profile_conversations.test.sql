-- Seed 004's onboarding: a conversation started in profile mode before the user had a profile is
-- linked to the profile that becomes their primary one (made primary, or created primary). Other
-- modes, archived conversations, conversations that already name a profile and other users'
-- conversations are left alone.
begin;
select plan(6);

select tests.create_cast('rpc-onboarding');
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('onboarding', (memory.create_conversation(p_title => 'Onboarding', p_mode => 'profile')).id);
select tests.remember('chat', (memory.create_conversation(p_title => 'Chat', p_mode => 'chat')).id);
select tests.remember('archived', (memory.create_conversation(p_title => 'Old', p_mode => 'profile')).id);
update memory.conversations set archived = true where id = tests.recall('archived')::uuid;
select tests.authenticate_as(tests.recall('stranger')::uuid);
select tests.remember('theirs', (memory.create_conversation(p_title => 'Theirs', p_mode => 'profile')).id);

select tests.authenticate_as(tests.recall('owner')::uuid);
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Side', false) returning id)
select tests.remember('side', id) from p;
select is(
    (select profile_id from memory.conversations where id = tests.recall('onboarding')::uuid), null,
    'a profile that is not primary links nothing'
);

update memory.profiles set is_primary = true where id = tests.recall('side')::uuid;
select is(
    (select profile_id from memory.conversations where id = tests.recall('onboarding')::uuid), tests.recall('side')::uuid,
    'made primary, it is linked to the profile-mode conversation started without a profile'
);
select results_eq(
    $$select id from memory.conversations where profile_id is null order by title$$,
    $$values (tests.recall('chat')::uuid), (tests.recall('archived')::uuid)$$,
    'a chat-mode and an archived conversation stay without a profile'
);

-- A later primary profile does not take over a conversation that names one.
update memory.profiles set is_primary = false where id = tests.recall('side')::uuid;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Main', true) returning id)
select tests.remember('main', id) from p;
select is(
    (select profile_id from memory.conversations where id = tests.recall('onboarding')::uuid), tests.recall('side')::uuid,
    'a conversation that names a profile keeps it'
);
select tests.remember('later', (memory.create_conversation(p_title => 'Later', p_mode => 'profile')).id);
select is(
    (select profile_id from memory.conversations where id = tests.recall('later')::uuid), null,
    'created after the primary profile, a conversation names only the profile it is given'
);

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(
    (select profile_id from memory.conversations where id = tests.recall('theirs')::uuid), null,
    'another user''s conversation is untouched'
);

select * from finish();
rollback;
