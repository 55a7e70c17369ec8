-- A message's author is the conversation's owner or one of its participants (23503 otherwise), so
-- a together-mode message can never be attributed to, and later feed the memory of, a stranger.
-- The service role (a trusted server) is the only caller that names an author; signed-in callers
-- are always the author of what they write (only_authors_write_their_own_words.test.sql).
begin;
select plan(6);

-- Setup passes an explicit window so the file does not depend on the global retention defaults.
select tests.create_cast('constraints-author');
select tests.remember('participant', tests.create_auth_user('constraints-author.participant@supamem.test'));
select memory.register_user(tests.recall('participant')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Together', 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id)
values (tests.recall('conv')::uuid, tests.recall('participant')::uuid);

select tests.authenticate_as_service_role();
select lives_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'mine', p_author_id => tests.recall('owner')::uuid)$$,
    'the owner may be the author'
);
select lives_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'theirs', p_author_id => tests.recall('participant')::uuid)$$,
    'a participant may be the author'
);
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'not theirs', p_author_id => tests.recall('stranger')::uuid)$$,
    '23503', 'message author is not a participant of the conversation', 'a non-participant author is refused'
);

-- After leaving, a former participant can no longer be an author.
select tests.clear_authentication();
delete from memory.participants where conversation_id = tests.recall('conv')::uuid and user_id = tests.recall('participant')::uuid;
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.add_message(tests.recall('conv')::uuid, 'user', 'too late', p_author_id => tests.recall('participant')::uuid)$$,
    '23503', null, 'a former participant is refused as author'
);

-- No update can re-attribute a message to a stranger.
select throws_ok(
    $$update memory.messages set author_id = tests.recall('stranger')::uuid
    where conversation_id = tests.recall('conv')::uuid and content = 'mine'$$,
    '23503', null, 'no update can make a stranger the author'
);
select tests.clear_authentication();
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[2],
    'only the two valid messages were written'
);

select * from finish();
rollback;
