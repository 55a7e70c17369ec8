-- memory.update_conversation(conversation, changes, user): seed 002's update_conversation. The
-- owner changes the title, archiving, "Remember in this chat", the profile, the mode and metadata;
-- another key or a value of the wrong kind is 22023; anon is 42501; a stranger, a participant and a
-- tenant admin get not found (P0002); the service role changes any, or only the user's it names.
-- A refused call changes nothing.
begin;
select plan(13);

select tests.create_cast('rpc-update-conversation');
select tests.remember('participant', tests.create_auth_user('rpc-update-conversation.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Before', 'together')).id);
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);

select tests.authenticate_as_anon();
select throws_ok(format('select memory.update_conversation(%L, ''{"title": "x"}'')', tests.recall('conv')), '42501', null,
    'anon cannot update');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(format('select memory.update_conversation(%L, ''{"title": "x"}'')', tests.recall('conv')), 'P0002', null,
    'a stranger gets not found');
select tests.authenticate_as(tests.recall('participant')::uuid);
select throws_ok(format('select memory.update_conversation(%L, ''{"title": "x"}'')', tests.recall('conv')), 'P0002', null,
    'a participant gets not found');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(format('select memory.update_conversation(%L, ''{"title": "x"}'')', tests.recall('conv')), 'P0002', null,
    'the tenant''s admin gets not found');

select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(format('select memory.update_conversation(%L, ''{"title": "x", "user_id": "y"}'')', tests.recall('conv')),
    '22023', 'cannot update user_id: only title, archived, remember, profile_id, mode, metadata', 'another key is refused');
select throws_ok(format('select memory.update_conversation(%L, ''{"archived": "yes"}'')', tests.recall('conv')),
    '22023', 'archived and remember are true or false', 'a boolean is a boolean');
select throws_ok(format('select memory.update_conversation(%L, ''{"profile_id": "nope"}'')', tests.recall('conv')),
    '22023', null, 'a profile id is an id');
select throws_ok(format('select memory.update_conversation(%L, ''[1]'')', tests.recall('conv')),
    '22023', 'the changes must be a JSON object', 'changes are an object');
select results_eq(
    format($$select title, archived, remember, profile_id, mode, metadata from memory.update_conversation(%L,
        jsonb_build_object('title', 'After', 'archived', true, 'remember', false, 'profile_id', %L, 'mode', 'profile',
            'metadata', '{"pinned": 1}'::jsonb))$$, tests.recall('conv'), tests.recall('profile')),
    format($$values ('After'::text, true, false, %L::uuid, 'profile'::text, '{"pinned": 1}'::jsonb)$$, tests.recall('profile')),
    'the owner changes all six'
);
select is((memory.update_conversation(tests.recall('conv')::uuid, '{"title": null}')).title, null, 'a title can be cleared');

select tests.authenticate_as_service_role();
select throws_ok(
    format('select memory.update_conversation(%L, ''{"title": "x"}'', %L)', tests.recall('conv'), tests.recall('stranger')),
    'P0002', null, 'the service role acting for a stranger gets not found'
);
select is((memory.update_conversation(tests.recall('conv')::uuid, '{"archived": false}', tests.recall('owner')::uuid)).archived,
    false, 'the service role acting for the owner changes it');
select tests.clear_authentication();
select results_eq(
    format('select title, archived, mode from memory.conversations where id = %L', tests.recall('conv')),
    $$values (null::text, false, 'profile'::text)$$,
    'refused calls changed nothing'
);

select * from finish();
rollback;
