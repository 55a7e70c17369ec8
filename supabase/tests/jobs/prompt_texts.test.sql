-- A prompt carries the beginning of a long message, llm_text_chars at most, and says how much it
-- left out; a shorter message goes whole. Both texts of an extraction, every turn of a summary or a
-- title and every turn of a chat's window (and so the turn the user points at) are cut so. A
-- setting below one character, or not a number, is refused (22023). The helper is a pure function
-- of its arguments: a signed-in user's prompt_context runs it, anon cannot.
begin;
select plan(13);

update memory_private.settings set value = '1' where key = 'summary_interval';
update memory_private.settings set value = '40' where key = 'llm_text_chars';
select tests.create_cast('prompt-texts');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('profile', id) from p;
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, null, 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('q', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'My diary: ' || repeat('a long day, ', 10), 'Thank you for sharing your diary.')));
select memory_private.queue_pending_extractions();
select memory_private.queue_pending_summaries();
select tests.remember('j_extract', (select id from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('q')));
select tests.remember('j_summary', (select id from memory_private.jobs where kind = 'summarize_conversation' and user_id = tests.recall('owner')::uuid));
select tests.remember('j_title', (select id from memory_private.jobs where kind = 'title' and user_id = tests.recall('owner')::uuid));
update memory_private.jobs set status = 'running', attempts = attempts + 1, worker = 'w', started_at = now(),
    leased_until = now() + interval '5 minutes'
where id in (tests.recall('j_extract')::bigint, tests.recall('j_summary')::bigint, tests.recall('j_title')::bigint);

select tests.authenticate_as_service_role();
select tests.remember('in_extract', memory.job_input(tests.recall('j_extract')::bigint, 'w'));
select is(
    tests.recall('in_extract')::jsonb ->> 'user_message',
    left('My diary: ' || repeat('a long day, ', 10), 40) || e'\n[… 90 more characters not shown]',
    'a long question reaches the extraction prompt as its beginning and what was left out'
);
select is(
    tests.recall('in_extract')::jsonb ->> 'assistant_message', 'Thank you for sharing your diary.',
    'a short answer goes whole'
);
select is(
    (select array[i #>> '{turns,0,user}', i #>> '{turns,0,assistant}'] from memory.job_input(tests.recall('j_summary')::bigint, 'w') as i),
    array[
        left('My diary: ' || repeat('a long day, ', 10), 40) || e'\n[… 90 more characters not shown]',
        'Thank you for sharing your diary.'
    ],
    'a summary''s turns are cut so'
);
select is(
    (select i #>> '{turns,0,user}' from memory.job_input(tests.recall('j_title')::bigint, 'w') as i),
    left('My diary: ' || repeat('a long day, ', 10), 40) || e'\n[… 90 more characters not shown]',
    'and a title''s'
);
select is(
    (select content from memory.messages where id = tests.recall('q')::bigint),
    'My diary: ' || repeat('a long day, ', 10), 'the message itself is whole'
);
select is(memory_private.prompt_text(repeat('x', 40), 40), repeat('x', 40), 'a text of exactly the limit goes whole');
select is(memory_private.prompt_text(null, 40), null, 'no text stays no text');

update memory_private.settings set value = '0' where key = 'llm_text_chars';
select throws_ok(
    format($$select memory.job_input(%s, 'w')$$, tests.recall('j_title')),
    '22023', 'setting llm_text_chars must be a number of at least 1', 'a setting below one character is refused'
);
update memory_private.settings set value = '"many"' where key = 'llm_text_chars';
select throws_ok(
    format($$select memory.job_input(%s, 'w')$$, tests.recall('j_title')),
    '22023', 'setting llm_text_chars must be a number of at least 1', 'a setting that is not a number is refused'
);

update memory_private.settings set value = '40' where key = 'llm_text_chars';
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('context', memory.prompt_context(tests.recall('conv')::uuid, 'about the previous message'));
select is(
    array[tests.recall('context')::jsonb #>> '{history,0,user_content}',
        tests.recall('context')::jsonb #>> '{history,0,assistant_content}'],
    array[left('My diary: ' || repeat('a long day, ', 10), 40) || e'\n[… 90 more characters not shown]',
        'Thank you for sharing your diary.'],
    'a chat''s window carries the beginning of a long turn'
);
select is(
    tests.recall('context')::jsonb #>> '{referenced_turn,user_content}',
    left('My diary: ' || repeat('a long day, ', 10), 40) || e'\n[… 90 more characters not shown]',
    'and so does the turn the user points at'
);
select tests.clear_authentication();
update memory_private.settings set value = '0' where key = 'llm_text_chars';
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(
    format($$select memory.prompt_context(%L)$$, tests.recall('conv')),
    '22023', 'setting llm_text_chars must be a number of at least 1', 'a chat''s prompt refuses the setting too'
);
select tests.authenticate_as_anon();
select throws_ok($$select memory_private.prompt_text('x', 1)$$, '42501', null, 'anon cannot call the helper');
select tests.clear_authentication();

select * from finish();
rollback;
