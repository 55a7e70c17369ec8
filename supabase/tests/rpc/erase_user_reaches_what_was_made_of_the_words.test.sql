-- Erasing a participant reaches what was made of their words in someone else's conversation:
-- the conversation summaries that covered one of their turns, a title generated from their first
-- question and the results of that conversation's summary and title jobs. What the owner's own
-- turns alone gave is kept.
begin;
select plan(7);

select tests.create_cast('rpc-erase-derived');
select tests.remember('guest', tests.create_auth_user('rpc-erase-derived.guest@supamem.test'));
select memory.register_user(tests.recall('guest')::uuid, tests.recall('tenant_a')::uuid);
select tests.remember(
    'conv', (memory.create_conversation(tests.recall('owner')::uuid, null, 'together', p_window_turns => 1000)).id
);
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('guest')::uuid);

-- Turn 1 is the guest's; turns 2-8 the owner's.
select tests.authenticate_as(tests.recall('guest')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, 'I am Bob and I live in Oslo', 'Hello Bob from Oslo');
select tests.authenticate_as(tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('conv')::uuid, format('owner question %s', i), 'answer') from generate_series(2, 8) as i;
select tests.clear_authentication();

-- What the workers made of them: two summaries, a title, the jobs' results.
insert into memory.conversation_summaries (conversation_id, user_id, from_turn, to_turn, summary) values
(tests.recall('conv')::uuid, tests.recall('owner')::uuid, 1, 4, 'Bob from Oslo joined; the owner asked three questions.'),
(tests.recall('conv')::uuid, tests.recall('owner')::uuid, 5, 8, 'The owner asked four more questions.');
update memory.conversations set title = 'Bob in Oslo' where id = tests.recall('conv')::uuid;
-- The turns queued a title job and noted a summary, which the pass queues; as if a worker had finished them.
select memory_private.queue_pending_summaries();
update memory_private.jobs set status = 'done', finished_at = now(), result = case kind
    when 'title' then '{"title": "Bob in Oslo"}'::jsonb else '{"summary": "Bob from Oslo joined"}'::jsonb end
where dedup_key in ('title:' || tests.recall('conv'), 'conversation:' || tests.recall('conv') || ':4');

select results_eq(
    $$select kind from memory_private.jobs where payload ->> 'conversation_id' = tests.recall('conv') and result is not null
    order by kind$$,
    $$values ('summarize_conversation'), ('title')$$,
    'before the erase, the finished title and summary jobs hold generated text'
);
select tests.authenticate_as_service_role();
select is(
    memory.erase_user(tests.recall('guest')::uuid) -> 'messages_in_other_conversations', '2'::jsonb,
    'the guest''s turn (question and answer) is erased'
);
select tests.clear_authentication();

select results_eq(
    $$select from_turn, to_turn from memory.conversation_summaries where conversation_id = tests.recall('conv')::uuid$$,
    $$values (5, 8)$$,
    'the summary that covered the guest''s turn is gone; the one of the owner''s turns alone stays'
);
select is(
    (select title from memory.conversations where id = tests.recall('conv')::uuid), null,
    'the title generated from the guest''s first question is cleared'
);
select is_empty(
    $$select id from memory_private.jobs where payload ->> 'conversation_id' = tests.recall('conv') and result is not null$$,
    'no job result of the conversation keeps the generated text'
);
select is_empty(
    $$select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and (content like '%Bob%' or content like '%Oslo%')$$,
    'no message of the conversation quotes the guest'
);
select results_eq(
    $$select count(*)::integer from memory.messages where conversation_id = tests.recall('conv')::uuid$$,
    array[14],
    'the owner''s seven turns stay'
);

select * from finish();
rollback;
