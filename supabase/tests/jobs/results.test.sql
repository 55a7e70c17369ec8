-- What a job reads (memory.job_input) and how its result is written (memory.finish_*): each
-- finish RPC checks the lease, validates, writes its row and completes the job in one step; a
-- refused call (no lease, bad input) writes nothing. Conversation summaries are dated by their
-- last turn; regenerating replaces; a generated title never overwrites the user's; weekly and
-- monthly counts come from the data. prompt_context carries the newest summaries.
--
-- Jobs are leased here by setting them running as postgres, so each step holds exactly the job it
-- means (the owner has several jobs of one kind); claim_jobs itself is tested in queue_functions.
begin;
select plan(51);

update memory_private.settings set value = '4' where key = 'summary_interval';
-- Every kind is queued (job_kinds), and one kind job_input does not know.
update memory_private.settings
set value = '["extract", "summarize_conversation", "title", "summarize_week", "summarize_month", "compare_year", "test_results_unknown"]'
where key = 'job_kinds';
select tests.create_cast('jobs-results');
with p as (
    insert into memory.profiles (user_id, name, is_primary, timezone, attributes)
    values (tests.recall('owner')::uuid, 'Main', true, 'America/Los_Angeles', '{"birth_chart": {"sun": "Leo"}}') returning id
)
select tests.remember('profile', id) from p;
with p as (
    insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Side', false) returning id
)
select tests.remember('side_profile', id) from p;

-- The main conversation: five turns in January (dates set as if they had been written then).
select tests.remember('conv', (memory.create_conversation(
    tests.recall('owner')::uuid, null, 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('q1', (select user_message_id from memory.add_turn(
    tests.recall('conv')::uuid, 'I go hiking in the mountains with my dog Rex', 'Rex must love it.')));
select memory.add_turn(tests.recall('conv')::uuid, format('Question %s', i), format('Answer %s', i)) from generate_series(2, 5) as i;
update memory.messages
set created_at = timestamptz '2026-01-05 10:00Z' + make_interval(days => turn_number) + case when role = 'assistant' then interval '1 minute' else interval '0' end
where conversation_id = tests.recall('conv')::uuid;

select memory_private.queue_pending_extractions();
select memory_private.queue_pending_summaries();
select tests.remember('j_extract', (select id from memory_private.jobs where kind = 'extract' and dedup_key = 'message:' || tests.recall('q1')));
select tests.remember('j_summary', (select id from memory_private.jobs where kind = 'summarize_conversation' and dedup_key = 'conversation:' || tests.recall('conv') || ':4'));
select tests.remember('j_title', (select id from memory_private.jobs where kind = 'title' and dedup_key = 'title:' || tests.recall('conv')));

-- Memories of the owner's primary profile, near and far from the first question, and some that
-- must never be offered: deleted, of another profile, of another user.
insert into memory.memories (user_id, profile_id, content, type) values
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Goes hiking in the mountains with his dog Rex', 'pattern'),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Likes hiking in the mountains', 'preference'),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Hiking in the mountains every summer', 'pattern'),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Walks the dog Rex every morning', 'pattern'),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Has a dog named Rex', 'fact'),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Works as an accountant in Lisbon', 'fact'),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'Plays the cello', 'fact'),
(tests.recall('owner')::uuid, tests.recall('side_profile')::uuid, 'I go hiking in the mountains with my dog Rex', 'fact');
insert into memory.memories (user_id, profile_id, content, type, deleted_at, active) values
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 'I go hiking in the mountains with my dog Rex!', 'fact', now(), false);
insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Theirs', true);
insert into memory.memories (user_id, content, type) values
(tests.recall('stranger')::uuid, 'I go hiking in the mountains with my dog Rex', 'fact');

update memory_private.jobs set status = 'running', attempts = attempts + 1, worker = 'results-worker', started_at = now(),
    leased_until = now() + interval '5 minutes'
where id in (tests.recall('j_extract')::bigint, tests.recall('j_summary')::bigint, tests.recall('j_title')::bigint);

-------------------------------------------------------------------------------------------------
-- job_input.
-------------------------------------------------------------------------------------------------
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.job_input(tests.recall('j_extract')::bigint, 'another-worker')$$, '55000', null,
    'job_input is refused to a worker without the lease'
);
select tests.remember('in_extract', memory.job_input(tests.recall('j_extract')::bigint, 'results-worker'));
select results_eq(
    $$select i ->> 'kind', i ->> 'user_id', (i ->> 'source_message_id')::bigint, i ->> 'mode', i ->> 'user_message', i ->> 'assistant_message'
    from (select tests.recall('in_extract')::jsonb as i) as x$$,
    $$values ('extract', tests.recall('owner'), tests.recall('q1')::bigint, 'profile',
        'I go hiking in the mountains with my dog Rex', 'Rex must love it.')$$,
    'extract input: the turn''s user and assistant messages, the user and the conversation''s mode'
);
select results_eq(
    $$select e ->> 'content' from jsonb_array_elements(tests.recall('in_extract')::jsonb -> 'existing_memories') with ordinality as x (e, n) order by n$$,
    $$values ('Goes hiking in the mountains with his dog Rex'), ('Likes hiking in the mountains'),
        ('Hiking in the mountains every summer'), ('Walks the dog Rex every morning'), ('Has a dog named Rex')$$,
    'extract input: the five nearest live memories of the profile, nearest first (not deleted ones, other profiles or users)'
);
select ok(
    (select bool_and(e ? 'id' and e ? 'type') from jsonb_array_elements(tests.recall('in_extract')::jsonb -> 'existing_memories') as e),
    'extract input: each existing memory carries its id and type'
);
select is(
    tests.recall('in_extract')::jsonb -> 'profile',
    '{"name": "Main", "timezone": "America/Los_Angeles", "attributes": {"birth_chart": {"sun": "Leo"}}}'::jsonb,
    'extract input: the profile the memories are about, with its attributes (seed 004''s birth chart)'
);

select results_eq(
    $$select memory.job_input(tests.recall('j_summary')::bigint, 'results-worker') - 'kind'$$,
    $$values (jsonb_build_object('conversation_id', tests.recall('conv'), 'turns', jsonb_build_array(
        jsonb_build_object('turn_number', 1, 'user', 'I go hiking in the mountains with my dog Rex', 'assistant', 'Rex must love it.'),
        jsonb_build_object('turn_number', 2, 'user', 'Question 2', 'assistant', 'Answer 2'),
        jsonb_build_object('turn_number', 3, 'user', 'Question 3', 'assistant', 'Answer 3'),
        jsonb_build_object('turn_number', 4, 'user', 'Question 4', 'assistant', 'Answer 4'))))$$,
    'summarize_conversation input: turns 1 to 4 in order (not turn 5)'
);
select results_eq(
    $$select jsonb_array_length(i -> 'turns'), i #>> '{turns,0,user}' from memory.job_input(tests.recall('j_title')::bigint, 'results-worker') as i$$,
    $$values (1, 'I go hiking in the mountains with my dog Rex')$$,
    'title input: the first turn only'
);

-------------------------------------------------------------------------------------------------
-- finish_extraction.
-------------------------------------------------------------------------------------------------
select throws_ok(
    $$select memory.finish_extraction(tests.recall('j_title')::bigint, 'results-worker', '[]')$$, '22023', null,
    'finish_extraction refuses a job of another kind'
);
select throws_ok(
    $$select memory.finish_extraction(tests.recall('j_extract')::bigint, 'another-worker',
        '[{"content": "Favourite trail is the Pacific Crest Trail", "type": "fact"}]')$$, '55000', null,
    'finish_extraction is refused without the lease'
);
select is_empty(
    $$select id from memory.memories where source_message_id = tests.recall('q1')::bigint
    union all select null from memory.memory_extractions where source_message_id = tests.recall('q1')::bigint$$,
    'the refused extraction wrote no memory and no ledger row'
);
select tests.remember('extract_result', memory.finish_extraction(
    tests.recall('j_extract')::bigint, 'results-worker',
    '[{"content": "Favourite trail is the Pacific Crest Trail", "type": "fact"}]', '{"total_tokens": 321}'));
select results_eq(
    $$select m.content, m.profile_id, r ->> 'outcome'
    from jsonb_array_elements(tests.recall('extract_result')::jsonb) as r
    join memory.memories as m on m.id = (r ->> 'memory_id')::uuid$$,
    $$values ('Favourite trail is the Pacific Crest Trail', tests.recall('profile')::uuid, 'added')$$,
    'finish_extraction adds the memory to the profile and reports it'
);
select results_eq(
    $$select status, result, usage, leased_until from memory_private.jobs where id = tests.recall('j_extract')::bigint$$,
    $$values ('done', tests.recall('extract_result')::jsonb, '{"total_tokens": 321}'::jsonb, null::timestamptz)$$,
    'and completes the job with that result and the usage, in the same call'
);

-------------------------------------------------------------------------------------------------
-- finish_conversation_summary: dated by the last turn, regenerating replaces.
-------------------------------------------------------------------------------------------------
select throws_ok(
    $$select memory.finish_conversation_summary(tests.recall('j_summary')::bigint, 'another-worker', 'Stolen summary')$$,
    '55000', null, 'finish_conversation_summary is refused without the lease'
);
select throws_ok(
    $$select memory.finish_conversation_summary(tests.recall('j_summary')::bigint, 'results-worker', '   ')$$,
    '23514', null, 'an empty summary is refused'
);
select is_empty(
    $$select id from memory.conversation_summaries where conversation_id = tests.recall('conv')::uuid$$,
    'refused summaries wrote nothing'
);
select tests.remember('summary_id', memory.finish_conversation_summary(
    tests.recall('j_summary')::bigint, 'results-worker', 'Hiking with Rex.', '{"total_tokens": 50}'));
select results_eq(
    $$select id, user_id, profile_id, from_turn, to_turn, summary, created_at
    from memory.conversation_summaries where conversation_id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('summary_id')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 1, 4,
        'Hiking with Rex.', timestamptz '2026-01-09 10:01Z')$$,
    'the summary covers turns 1-4 and is dated by turn 4''s answer, not by when the job ran'
);
select results_eq(
    $$select status, result from memory_private.jobs where id = tests.recall('j_summary')::bigint$$,
    $$values ('done', jsonb_build_object('summary_id', tests.recall('summary_id')::uuid))$$,
    'the summary job is done with the summary''s id'
);
select is(
    memory_private.enqueue('summarize_conversation', '{}', 'conversation:' || tests.recall('conv') || ':4', p_replace => true),
    tests.recall('j_summary')::bigint,
    'regenerating queues the same job again'
);
select tests.clear_authentication();
update memory_private.jobs set payload = jsonb_build_object('conversation_id', tests.recall('conv'), 'from_turn', 1, 'to_turn', 4),
    status = 'running', worker = 'results-worker', leased_until = now() + interval '5 minutes'
where id = tests.recall('j_summary')::bigint;
select tests.authenticate_as_service_role();
select memory.finish_conversation_summary(tests.recall('j_summary')::bigint, 'results-worker', 'Hiking with Rex, revised.');
select results_eq(
    $$select id, summary, created_at from memory.conversation_summaries where conversation_id = tests.recall('conv')::uuid$$,
    $$values (tests.recall('summary_id')::uuid, 'Hiking with Rex, revised.', timestamptz '2026-01-09 10:01Z')$$,
    'a regenerated summary replaces the old one: still one row for the conversation and turn 4'
);

-------------------------------------------------------------------------------------------------
-- finish_title: never over a title the user set.
-------------------------------------------------------------------------------------------------
select throws_ok(
    $$select memory.finish_title(tests.recall('j_title')::bigint, 'results-worker', '  ')$$, '22023', null,
    'an empty title is refused'
);
select throws_ok(
    $$select memory.finish_title(tests.recall('j_title')::bigint, 'another-worker', 'Stolen')$$, '55000', null,
    'finish_title is refused without the lease'
);
select results_eq(
    $$select title, (select status from memory_private.jobs where id = tests.recall('j_title')::bigint)
    from memory.conversations where id = tests.recall('conv')::uuid$$,
    $$values (null::text, 'running')$$,
    'refused titles wrote nothing and left the job running'
);
select is(
    memory.finish_title(tests.recall('j_title')::bigint, 'results-worker', '  Hiking with Rex  ', '{"total_tokens": 9}'),
    'Hiking with Rex',
    'finish_title returns the trimmed title'
);
select results_eq(
    $$select c.title, j.status, j.result from memory.conversations as c, memory_private.jobs as j
    where c.id = tests.recall('conv')::uuid and j.id = tests.recall('j_title')::bigint$$,
    $$values ('Hiking with Rex', 'done', '{"title": "Hiking with Rex"}'::jsonb)$$,
    'an untitled conversation gets the generated title and the job is done'
);
select tests.remember('conv_named', (memory.create_conversation(tests.recall('owner')::uuid, null, 'chat', p_window_turns => 1000)).id);
select memory.add_turn(tests.recall('conv_named')::uuid, 'Hello', 'Hi.');
select tests.remember('j_title2', (select id from memory_private.jobs where kind = 'title' and dedup_key = 'title:' || tests.recall('conv_named')));
-- The user names the conversation while the title job waits.
update memory.conversations set title = 'My own name' where id = tests.recall('conv_named')::uuid;
select tests.clear_authentication();
update memory_private.jobs set status = 'running', attempts = 1, worker = 'results-worker', leased_until = now() + interval '5 minutes'
where id = tests.recall('j_title2')::bigint;
select tests.authenticate_as_service_role();
select memory.finish_title(tests.recall('j_title2')::bigint, 'results-worker', repeat('Long generated title ', 20));
select results_eq(
    $$select c.title, j.status from memory.conversations as c, memory_private.jobs as j
    where c.id = tests.recall('conv_named')::uuid and j.id = tests.recall('j_title2')::bigint$$,
    $$values ('My own name', 'done')$$,
    'a generated title never overwrites the user''s; the job is still done'
);
select is(
    (select length(result ->> 'title') from memory_private.jobs where id = tests.recall('j_title2')::bigint), 120,
    'a generated title is cut to 120 characters'
);

-------------------------------------------------------------------------------------------------
-- Weekly: the profile's local week (Los Angeles, the week of Monday 2 March 2026, which ends on
-- the Sunday DST starts).
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
select tests.remember('c2', (memory.create_conversation(tests.recall('owner')::uuid, 'C2', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
select tests.remember('c3', (memory.create_conversation(tests.recall('owner')::uuid, 'C3', 'profile', tests.recall('profile')::uuid, p_window_turns => 1000)).id);
insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at) values
-- Sunday 1 March 23:59 PST: the week before.
(tests.recall('c3')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 1, 4, 'Before the week', '2026-03-02 07:59Z'),
-- Monday 2 March 00:30 PST, Wednesday, and Sunday 8 March 23:30 PDT: in the week.
(tests.recall('c2')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 1, 4, 'Monday start', '2026-03-02 08:30Z'),
(tests.recall('c2')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 5, 8, 'Midweek', '2026-03-04 20:00Z'),
(tests.recall('c3')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 5, 8, 'Sunday night', '2026-03-09 06:30Z'),
-- Monday 9 March 00:30 PDT: the week after.
(tests.recall('c2')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 9, 12, 'After the week', '2026-03-09 07:30Z');
select tests.remember('j_week', memory_private.enqueue(
    'summarize_week', jsonb_build_object('profile_id', tests.recall('profile'), 'week_start', '2026-03-02'),
    'week:' || tests.recall('profile') || ':2026-03-02', tests.recall('owner')::uuid));
update memory_private.jobs set status = 'running', attempts = 1, worker = 'results-worker', leased_until = now() + interval '5 minutes'
where id = tests.recall('j_week')::bigint;

select tests.authenticate_as_service_role();
select results_eq(
    $$select memory.job_input(tests.recall('j_week')::bigint, 'results-worker')$$,
    $$values ('{"kind": "summarize_week", "week_start": "2026-03-02", "time_zone": "America/Los_Angeles",
        "summaries": ["Monday start", "Midweek", "Sunday night"], "summaries_left_out": 0}'::jsonb)$$,
    'summarize_week input: the conversation summaries of the local week, oldest first'
);
-- A week past the prompt's characters: its newest summaries while they fit, and how many are left out.
select tests.clear_authentication();
update memory_private.settings set value = to_jsonb(length('Sunday night') + length('Midweek')) where key = 'llm_text_chars';
select tests.authenticate_as_service_role();
select results_eq(
    $$select i -> 'summaries', i -> 'summaries_left_out'
    from memory.job_input(tests.recall('j_week')::bigint, 'results-worker') as i$$,
    $$values ('["Midweek", "Sunday night"]'::jsonb, '1'::jsonb)$$,
    'a busy week: its newest summaries that fit in llm_text_chars, oldest first, and the count left out'
);
select tests.clear_authentication();
update memory_private.settings set value = '5' where key = 'llm_text_chars';
select tests.authenticate_as_service_role();
select results_eq(
    $$select i -> 'summaries', i -> 'summaries_left_out'
    from memory.job_input(tests.recall('j_week')::bigint, 'results-worker') as i$$,
    $$values (jsonb_build_array(memory_private.prompt_text('Sunday night', 5)), '2'::jsonb)$$,
    'a newest summary past llm_text_chars alone: its beginning, never no summary at all'
);
select tests.clear_authentication();
update memory_private.settings set value = '20000' where key = 'llm_text_chars';
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.finish_weekly_summary(tests.recall('j_week')::bigint, 'another-worker', 'Stolen', '{}', '{}')$$,
    '55000', null, 'finish_weekly_summary is refused without the lease'
);
select is_empty(
    $$select id from memory.weekly_summaries where profile_id = tests.recall('profile')::uuid$$,
    'the refused weekly summary wrote nothing'
);
select tests.remember('week_id', memory.finish_weekly_summary(
    tests.recall('j_week')::bigint, 'results-worker', 'A calm week outdoors.', array['hiking', 'dog'], array['early walks']));
select results_eq(
    $$select id, user_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary, key_themes,
        dominant_patterns, conversation_count
    from memory.weekly_summaries where profile_id = tests.recall('profile')::uuid$$,
    $$values (tests.recall('week_id')::uuid, tests.recall('owner')::uuid, 2026::smallint, 10::smallint, date '2026-03-02',
        date '2026-03-08', 'A calm week outdoors.', array['hiking', 'dog'], array['early walks'], 2)$$,
    'the weekly summary: ISO week 10, Monday to Sunday, and the count of conversations summarised that week (2)'
);
select results_eq(
    $$select status, result from memory_private.jobs where id = tests.recall('j_week')::bigint$$,
    $$values ('done', jsonb_build_object('weekly_summary_id', tests.recall('week_id')::uuid))$$,
    'the week job is done'
);

-------------------------------------------------------------------------------------------------
-- Monthly: March 2026 holds the weeks of 2, 9, 16 and 23 March (the week of 30 March has its
-- Thursday in April).
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date,
    emotional_summary, key_themes, conversation_count) values
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 2026, 12, '2026-03-16', '2026-03-22', 'Busy week.', '{work}', 3),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 2026, 9, '2026-02-23', '2026-03-01', 'February''s last week.', '{}', 7),
(tests.recall('owner')::uuid, tests.recall('profile')::uuid, 2026, 14, '2026-03-30', '2026-04-05', 'April''s first week.', '{}', 11);
-- The week of 9 March is still being summarised; the week of 30 March belongs to April.
select memory_private.enqueue('summarize_week', jsonb_build_object('profile_id', tests.recall('profile'), 'week_start', '2026-03-09'),
    'week:' || tests.recall('profile') || ':2026-03-09', tests.recall('owner')::uuid);
select memory_private.enqueue('summarize_week', jsonb_build_object('profile_id', tests.recall('profile'), 'week_start', '2026-03-30'),
    'week:' || tests.recall('profile') || ':2026-03-30', tests.recall('owner')::uuid);
select tests.remember('j_month', memory_private.enqueue(
    'summarize_month', jsonb_build_object('profile_id', tests.recall('profile'), 'month_start', '2026-03-01'),
    'month:' || tests.recall('profile') || ':2026-03', tests.recall('owner')::uuid));
update memory_private.jobs set status = 'running', attempts = 1, worker = 'results-worker', leased_until = now() + interval '5 minutes'
where id = tests.recall('j_month')::bigint;

select tests.authenticate_as_service_role();
select tests.remember('in_month', memory.job_input(tests.recall('j_month')::bigint, 'results-worker'));
select results_eq(
    $$select w ->> 'week_start', w ->> 'emotional_summary' from jsonb_array_elements(tests.recall('in_month')::jsonb -> 'weekly_summaries') as w$$,
    $$values ('2026-03-02', 'A calm week outdoors.'), ('2026-03-16', 'Busy week.')$$,
    'summarize_month input: the weekly summaries of the weeks whose Thursday is in March, in order'
);
select is(
    (tests.recall('in_month')::jsonb ->> 'weeks_pending')::integer, 1,
    'summarize_month input: one of its weeks is still pending (not the April one)'
);
select is(
    tests.recall('in_month')::jsonb -> 'profile' -> 'attributes',
    '{"birth_chart": {"sun": "Leo"}}'::jsonb,
    'summarize_month input: the profile''s attributes, for the month''s context'
);
select throws_ok(
    $$select memory.finish_monthly_summary(tests.recall('j_month')::bigint, 'another-worker', 'Stolen', null, '{}')$$,
    '55000', null, 'finish_monthly_summary is refused without the lease'
);
select is_empty(
    $$select id from memory.monthly_summaries where profile_id = tests.recall('profile')::uuid$$,
    'the refused monthly summary wrote nothing'
);
select tests.remember('month_id', memory.finish_monthly_summary(
    tests.recall('j_month')::bigint, 'results-worker', 'March was active.', 'Planning ahead.', array['hiking'], '{"weeks": "partial"}'));
select results_eq(
    $$select id, year, month, emotional_summary, cognitive_summary, key_themes, context, conversation_count, weekly_summaries_used
    from memory.monthly_summaries where profile_id = tests.recall('profile')::uuid$$,
    $$values (tests.recall('month_id')::uuid, 2026::smallint, 3::smallint, 'March was active.', 'Planning ahead.',
        array['hiking'], '{"weeks": "partial"}'::jsonb, 5, 2)$$,
    'the monthly summary counts from the data: 2 weekly summaries used, 2 + 3 conversations'
);
select results_eq(
    $$select status, result from memory_private.jobs where id = tests.recall('j_month')::bigint$$,
    $$values ('done', jsonb_build_object('monthly_summary_id', tests.recall('month_id')::uuid))$$,
    'the month job is done'
);

-------------------------------------------------------------------------------------------------
-- compare_year: March 2026 against March 2025.
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary, cognitive_summary, key_themes)
values (tests.recall('owner')::uuid, tests.recall('profile')::uuid, 2025, 3, 'March 2025 was quiet.', 'Few plans.', '{rest}');
select tests.authenticate_as_service_role();
select throws_ok(format($$select memory.compare_year(%L, 2026, 13)$$, tests.recall('profile')), '22023',
    'year and month out of range', 'a month 13 is refused, not reported as a month without summaries');
select throws_ok(format($$select memory.compare_year(%L, 1970, 3)$$, tests.recall('profile')), '22023',
    'year and month out of range', 'so is a year with no year before it to compare');
select is(memory.compare_year(tests.recall('profile')::uuid, 2026, 3) ->> 'status', 'queued', 'with both months summarised, compare_year queues');
select tests.remember('j_compare', (select id from memory_private.jobs where kind = 'compare_year' and user_id = tests.recall('owner')::uuid));
select tests.clear_authentication();
update memory_private.jobs set status = 'running', attempts = 1, worker = 'results-worker', leased_until = now() + interval '5 minutes'
where id = tests.recall('j_compare')::bigint;
select tests.authenticate_as_service_role();
select results_eq(
    $$select i ->> 'year', i ->> 'month', jsonb_path_query_array(i, '$.months[*].year'), jsonb_path_query_array(i, '$.months[*].emotional_summary')
    from memory.job_input(tests.recall('j_compare')::bigint, 'results-worker') as i$$,
    $$values ('2026', '3', '[2025, 2026]'::jsonb, '["March 2025 was quiet.", "March was active."]'::jsonb)$$,
    'compare_year input: the same month of both years, the earlier first'
);
select throws_ok(
    $$select memory.finish_year_comparison(tests.recall('j_compare')::bigint, 'another-worker', 'Stolen')$$,
    '55000', null, 'finish_year_comparison is refused without the lease'
);
select is_empty(
    $$select id from memory.yearly_comparisons where profile_id = tests.recall('profile')::uuid$$,
    'the refused comparison wrote nothing'
);
select tests.remember('compare_id', memory.finish_year_comparison(tests.recall('j_compare')::bigint, 'results-worker', 'Busier than last year.'));
select results_eq(
    $$select y.id, y.year, y.month, y.comparison, j.status from memory.yearly_comparisons as y, memory_private.jobs as j
    where y.profile_id = tests.recall('profile')::uuid and j.id = tests.recall('j_compare')::bigint$$,
    $$values (tests.recall('compare_id')::uuid, 2026::smallint, 3::smallint, 'Busier than last year.', 'done')$$,
    'finish_year_comparison stores the comparison and completes the job'
);
select is(
    memory.compare_year(tests.recall('profile')::uuid, 2026, 3),
    '{"status": "ready", "comparison": "Busier than last year."}'::jsonb,
    'compare_year then returns the stored comparison'
);

-- A job of a kind job_input does not know.
select tests.remember('j_unknown', memory_private.enqueue('test_results_unknown', '{}'));
select tests.clear_authentication();
update memory_private.jobs set status = 'running', attempts = 1, worker = 'results-worker', leased_until = now() + interval '5 minutes'
where id = tests.recall('j_unknown')::bigint;
select tests.authenticate_as_service_role();
select throws_ok(
    $$select memory.job_input(tests.recall('j_unknown')::bigint, 'results-worker')$$, '22023', null,
    'job_input refuses a kind it does not know'
);

-------------------------------------------------------------------------------------------------
-- prompt_context carries the newest conversation summary, and the profile's newest weekly and
-- monthly summaries when the conversation is profiled.
-------------------------------------------------------------------------------------------------
select tests.clear_authentication();
insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at)
values (tests.recall('conv')::uuid, tests.recall('owner')::uuid, tests.recall('profile')::uuid, 1, 2, 'An older, shorter summary', '2026-01-07 10:01Z');
select tests.remember('generic', (memory.create_conversation(tests.recall('owner')::uuid, 'Generic', 'chat', p_window_turns => 1000)).id);
insert into memory.conversation_summaries (conversation_id, user_id, from_turn, to_turn, summary)
values (tests.recall('generic')::uuid, tests.recall('owner')::uuid, 1, 4, 'Generic chat summary');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select c #>> '{conversation_summary,summary}', c #>> '{weekly_summary,week_start_date}', c #>> '{monthly_summary,emotional_summary}'
    from memory.prompt_context(tests.recall('conv')::uuid) as c$$,
    $$values ('Hiking with Rex, revised.', '2026-03-30', 'March was active.')$$,
    'prompt_context: the summary of the latest turns, the newest weekly and the newest monthly summary'
);
select results_eq(
    $$select c #>> '{conversation_summary,summary}', (c -> 'weekly_summary')::jsonb, (c -> 'monthly_summary')::jsonb
    from memory.prompt_context(tests.recall('generic')::uuid) as c$$,
    $$values ('Generic chat summary', 'null'::jsonb, 'null'::jsonb)$$,
    'prompt_context of a generic chat: its conversation summary, no profile summaries'
);

select * from finish();
rollback;
