-- Together mode: a message's author feeds the author's memory, so only the author writes their
-- own words. The owner cannot name a participant as the author (nor choose a participant's
-- profile, nor read it); a participant posts from their own session; and when an author's user
-- goes (account deletion or erase_user) the turns they wrote in others' conversations go too,
-- question and answer, instead of staying behind as words of nobody, which read as the owner's.
begin;
select plan(13);

select tests.create_cast('constraints-own-words');
select tests.remember('victim', tests.create_auth_user('constraints-own-words.victim@supamem.test'));
select memory.register_user(tests.recall('victim')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember('leaver', tests.create_auth_user('constraints-own-words.leaver@supamem.test'));
select memory.register_user(tests.recall('leaver')::uuid, tests.recall('tenant_a')::uuid);
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('victim')::uuid, 'Victim', true) returning id
)
select tests.remember('victim_profile', id) from p;
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Together', 'together', p_window_turns => 1000)).id
);

-- The owner invites without choosing the guest's profile, and cannot read the profile they pick.
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$insert into memory.participants (conversation_id, user_id, profile_id)
    values (tests.recall('conv')::uuid, tests.recall('victim')::uuid, tests.recall('victim_profile')::uuid)$$,
    '42501', null, 'the owner cannot choose a participant''s profile'
);
select lives_ok(
    $$insert into memory.participants (conversation_id, user_id) values
    (tests.recall('conv')::uuid, tests.recall('victim')::uuid), (tests.recall('conv')::uuid, tests.recall('leaver')::uuid)$$,
    'the owner invites participants'
);
select tests.authenticate_as(tests.recall('victim')::uuid);
update memory.participants set profile_id = tests.recall('victim_profile')::uuid
where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('victim')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    $$select profile_id from memory.participants where conversation_id = tests.recall('conv')::uuid$$,
    '42501', null, 'the owner cannot read which profile a participant chose'
);

-- The owner cannot write in the victim's name, through either RPC or the Data API.
select throws_ok(
    $$select memory.add_turn(tests.recall('conv')::uuid, 'I live in X. Forget that I love tennis.', 'ok',
        p_author_id => tests.recall('victim')::uuid)$$,
    '42501', 'only the author writes their own words', 'add_turn refuses an author who is not the caller'
);
select throws_ok(
    $$insert into memory.messages (conversation_id, role, content, author_id)
    values (tests.recall('conv')::uuid, 'user', 'Forget that I love tennis.', tests.recall('victim')::uuid)$$,
    '42501', 'only the author writes their own words', 'a Data API insert refuses it too'
);
select tests.clear_authentication();
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    'nothing was written'
);

-- A participant posts from their own session; the question is theirs, the conversation the owner's.
select tests.authenticate_as(tests.recall('victim')::uuid);
select tests.remember('painted', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'I paint on Sundays', 'Lovely.')));
select results_eq(
    $$select author_id, user_id from memory.messages where id = tests.recall('painted')::bigint$$,
    $$values (tests.recall('victim')::uuid, tests.recall('owner')::uuid)$$,
    'a participant''s own question is recorded as theirs'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'Said by the owner', p_author_id => tests.recall('owner')::uuid)$$,
    '42501', 'only the author writes their own words', 'a participant cannot write in the owner''s name'
);

-- The owner's own turn, then the leaver's, then the victim's second.
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'My own question', 'My answer');
select tests.authenticate_as(tests.recall('leaver')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'The leaver speaks', 'An answer quoting the leaver');
select tests.authenticate_as(tests.recall('victim')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'I sing too', 'Nice.');
select tests.clear_authentication();

-- Supabase's delete account: the auth user goes; the leaver's turn goes with them, both messages.
delete from auth.users where id = tests.recall('leaver')::uuid;
select results_eq(
    $$select turn_number, role from memory.messages where conversation_id = tests.recall('conv')::uuid order by turn_number, role desc$$,
    $$values (1, 'user'), (1, 'assistant'), (2, 'user'), (2, 'assistant'), (4, 'user'), (4, 'assistant')$$,
    'a deleted account takes its question and the answer to it out of others'' conversations'
);
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and role = 'user' and author_id is null and content <> 'My own question'$$,
    'no question of someone else is left without its author, to be read as the owner''s'
);

-- erase_user: the same for the victim, counted in its answer.
select tests.authenticate_as_service_role();
select is(
    memory.erase_user(tests.recall('victim')::uuid) -> 'messages_in_other_conversations',
    '4'::jsonb,
    'erase_user removes the erased user''s two turns (four messages) from the owner''s conversation'
);
select tests.clear_authentication();
select results_eq(
    $$select turn_number, role, content from memory.messages where conversation_id = tests.recall('conv')::uuid
    order by turn_number, role desc$$,
    $$values (2, 'user', 'My own question'), (2, 'assistant', 'My answer')$$,
    'only the owner''s own turn is left'
);
select results_eq(
    $$select author_id is null or author_id = tests.recall('owner')::uuid from memory.messages
    where conversation_id = tests.recall('conv')::uuid and role = 'user'$$,
    array[true],
    'the owner''s own question is the owner''s'
);

select * from finish();
rollback;
