-- Finding, moving and erasing memories. memory.search_memories: keywords (full text), typos
-- (trigram word similarity), filters (type, category, profile, conversation, date range, status)
-- and paging. memory.export_memories: every column of every memory of the user.
-- memory.erase_user: the user's conversations, messages, memories, history, extraction ledger,
-- key-value store, state, short-term state and profiles go, and so do the turns they wrote in
-- someone else's together conversation, question and answer; nobody else's rows are touched. memory.import_memories
-- after an erase brings the same records back (ids, links and all), and a second import adds
-- nothing; another user importing the export gets ids of their own and learns nothing of the owner's.
begin;
select plan(37);

select tests.create_cast('memories-search');
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Me', true) returning id)
select tests.remember('p', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('owner')::uuid, 'Work', false) returning id)
select tests.remember('q', id) from p;
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('stranger')::uuid, 'Stranger', true) returning id)
select tests.remember('ps', id) from p;

-- The owner's conversation and memories.
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Running', 'profile', tests.recall('p')::uuid)).id);
select tests.remember('msg', (select user_message_id from memory.add_turn(tests.recall('conv')::uuid, 'I am training for a marathon', 'Great.')));

select tests.authenticate_as_service_role();
select memory.apply_extraction(
    tests.recall('msg')::bigint,
    '[{"content": "I am training for a marathon in December", "type": "goal", "category": "fitness", "confidence": 0.95}]',
    tests.recall('owner')::uuid
);
select memory.remember('My favourite food is adobo', 'preference', tests.recall('owner')::uuid, p_category => 'food');
select memory.remember('I run every morning before work', 'pattern', tests.recall('owner')::uuid, p_category => 'fitness', p_pinned => true);
select memory.remember('I manage a team at work', 'fact', tests.recall('owner')::uuid, tests.recall('q')::uuid);
select memory.remember('I used to play basketball', 'fact', tests.recall('owner')::uuid);
select tests.clear_authentication();
update memory.memories set archived = true where content = 'I used to play basketball';
select tests.authenticate_as_service_role();
select memory.forget((select memory_id from memory.remember('I had a pet turtle', 'fact', tests.recall('owner')::uuid)));
select memory.revise_memory((select memory_id from memory.remember('I live in Manila', 'fact', tests.recall('owner')::uuid)), 'I live in Makati');
select memory.mark_memories_used(null, array(select id from memory.memories where content = 'I live in Makati'));
select tests.clear_authentication();
insert into memory.memories (user_id, content, type, created_at)
values (tests.recall('owner')::uuid, 'I visited Baguio last year', 'fact', now() - interval '10 days');
select tests.authenticate_as_service_role();
select memory.remember('I am training for a marathon too', 'goal', tests.recall('stranger')::uuid);

-- search: keywords, typos, filters.
select results_eq(
    $$select content from memory.search_memories('marathon', tests.recall('owner')::uuid)$$,
    $$values ('I am training for a marathon in December')$$,
    'a keyword finds the user''s memory (and not another user''s)'
);
select results_eq(
    $$select content from memory.search_memories('marathn', tests.recall('owner')::uuid)$$,
    $$values ('I am training for a marathon in December')$$,
    'a typo ("marathn") still finds "marathon"'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_type => 'pattern')$$,
    $$values ('I run every morning before work')$$,
    'filter by type'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_category => 'fitness') order by content$$,
    $$values ('I am training for a marathon in December'), ('I run every morning before work')$$,
    'filter by category'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_profile_id => tests.recall('q')::uuid)$$,
    $$values ('I manage a team at work')$$,
    'filter by profile'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_conversation_id => tests.recall('conv')::uuid)$$,
    $$values ('I am training for a marathon in December')$$,
    'filter by source conversation'
);
select results_eq(
    $$select content from memory.search_memories(
        p_user_id => tests.recall('owner')::uuid, p_created_from => now() - interval '11 days', p_created_to => now() - interval '1 day')$$,
    $$values ('I visited Baguio last year')$$,
    'filter by creation date range'
);
select is_empty(
    $$select content from memory.search_memories(
        p_user_id => tests.recall('owner')::uuid, p_created_from => now() - interval '11 days', p_created_to => now() - interval '10 days')$$,
    'the date range excludes its end'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid) order by content$$,
    $$values ('I am training for a marathon in December'), ('I live in Makati'), ('I manage a team at work'),
        ('I run every morning before work'), ('I visited Baguio last year'), ('My favourite food is adobo')$$,
    'status active (the default): not archived, deleted or superseded'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'archived')$$,
    $$values ('I used to play basketball')$$,
    'status archived'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'deleted')$$,
    $$values ('I had a pet turtle')$$,
    'status deleted'
);
select results_eq(
    $$select content from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'superseded')$$,
    $$values ('I live in Manila')$$,
    'status superseded'
);
select results_eq(
    $$select count(*)::integer from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'all')$$,
    array[9],
    'status all'
);
select throws_ok(
    $$select * from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'forgotten')$$,
    '22023', 'unknown status ''forgotten''',
    'an unknown status is refused'
);
select results_eq(
    $$select id from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'all', p_limit => 4)
    union all
    select id from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'all', p_limit => 4, p_offset => 4)
    union all
    select id from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'all', p_limit => 4, p_offset => 8)$$,
    $$select id from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'all', p_limit => 200)$$,
    'pages of 4 at offsets 0, 4 and 8 are the whole list, in order, without overlap'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    $$select id from memory.search_memories(p_user_id => tests.recall('owner')::uuid, p_status => 'all')$$,
    'a stranger searching for the owner''s memories finds none'
);

-- export: every column of every memory.
select tests.authenticate_as(tests.recall('owner')::uuid);
select tests.remember('export', memory.export_memories());
select is(
    array(
        select distinct array(select k from jsonb_object_keys(m) as k order by k)
        from jsonb_array_elements(tests.recall('export')::jsonb -> 'memories') as m
    ),
    array[array(
        select a.attname::text from pg_catalog.pg_attribute as a
        where a.attrelid = 'memory.memories'::regclass and a.attnum > 0 and not a.attisdropped and a.attname <> 'search'
        order by 1
    )],
    'every exported memory has every column of memory.memories except the search vector'
);
select results_eq(
    $$select (m ->> 'id')::uuid from jsonb_array_elements(tests.recall('export')::jsonb -> 'memories') as m order by 1$$,
    $$select id from memory.memories where user_id = tests.recall('owner')::uuid order by 1$$,
    'the export holds every memory of the user, whatever its status'
);
select results_eq(
    $$select e ->> 'format', (e ->> 'version')::integer, (e ->> 'user_id')::uuid,
        array(select (p ->> 'id')::uuid from jsonb_array_elements(e -> 'profiles') as p order by 1)
    from (select tests.recall('export')::jsonb as e) as x$$,
    $$values ('supamem.memories', 1, tests.recall('owner')::uuid,
        array(select id from memory.profiles where user_id = tests.recall('owner')::uuid order by 1))$$,
    'the export names its format, version, user and the user''s profiles'
);
select tests.clear_authentication();
insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('p')::uuid, 2026, 10, '2026-03-02', '2026-03-08', 'A calm week');
insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary)
values (tests.recall('owner')::uuid, tests.recall('p')::uuid, 2026, 3, 'A calm March');
insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
values (tests.recall('owner')::uuid, tests.recall('p')::uuid, 2026, 3, 'Calmer than last March');
select tests.authenticate_as(tests.recall('owner')::uuid);
select results_eq(
    $$select e #>> '{weekly_summaries,0,emotional_summary}', e #>> '{monthly_summaries,0,emotional_summary}',
        e #>> '{yearly_comparisons,0,comparison}',
        jsonb_array_length(e -> 'weekly_summaries') + jsonb_array_length(e -> 'monthly_summaries')
        + jsonb_array_length(e -> 'yearly_comparisons')
    from (select memory.export_memories() as e) as x$$,
    $$values ('A calm week', 'A calm March', 'Calmer than last March', 3)$$,
    'the export holds the user''s weekly and monthly summaries and year-over-year comparisons'
);

-- erase: set up everything a user can own, and a together conversation of the stranger's.
select tests.authenticate_as_service_role();
select memory.kv_set('prefs', '{"theme": "dark"}', tests.recall('owner')::uuid);
select memory.state_set('active', tests.recall('owner')::uuid);
select memory.short_term_set('clarify', '{"q": 1}', p_user_id => tests.recall('owner')::uuid);
select memory.kv_set('prefs', '{"theme": "light"}', tests.recall('stranger')::uuid);
select memory.state_set('halted', tests.recall('stranger')::uuid);
select memory.short_term_set('clarify', '{"q": 2}', p_user_id => tests.recall('stranger')::uuid);
select tests.remember('together', (memory.create_conversation(tests.recall('stranger')::uuid, 'Together', 'together', p_remember => true)).id);
insert into memory.participants (conversation_id, user_id, profile_id)
values (tests.recall('together')::uuid, tests.recall('owner')::uuid, tests.recall('p')::uuid);
select tests.remember('owner_msg', (select user_message_id from memory.add_turn(
    tests.recall('together')::uuid, 'I am the owner and I bake', 'Yum.', p_author_id => tests.recall('owner')::uuid
)));
select memory.apply_extraction(tests.recall('owner_msg')::bigint, '[{"content": "Bakes sourdough", "type": "fact"}]', tests.recall('owner')::uuid);
select memory.add_turn(tests.recall('together')::uuid, 'I am the stranger and I knit', 'Cosy.');
select tests.remember('stranger_conv', (memory.create_conversation(tests.recall('stranger')::uuid, 'Mine', 'profile', tests.recall('ps')::uuid)).id);
select tests.remember('stranger_msg', (select user_message_id from memory.add_turn(tests.recall('stranger_conv')::uuid, 'I knit scarves', 'Nice.')));
select memory.apply_extraction(tests.recall('stranger_msg')::bigint, '[{"content": "Knits scarves", "type": "fact"}]', tests.recall('stranger')::uuid);
-- The owner's export is taken again now that the together-mode memory exists.
select tests.remember('export', memory.export_memories(tests.recall('owner')::uuid));

-- Rows per table that belong to a user (messages: the ones they wrote, in any conversation).
select tests.clear_authentication();
create function pg_temp.row_counts(p_user uuid)
returns table (t text, n bigint)
language sql
as $$
    select c.t, c.n from (values
        ('users', (select count(*) from memory.users where id = p_user)),
        ('profiles', (select count(*) from memory.profiles where user_id = p_user)),
        ('conversations', (select count(*) from memory.conversations where user_id = p_user)),
        ('participants', (select count(*) from memory.participants where user_id = p_user)),
        ('messages', (select count(*) from memory.messages where coalesce(author_id, user_id) = p_user)),
        ('memories', (select count(*) from memory.memories where user_id = p_user)),
        ('memory_events', (select count(*) from memory.memory_events where user_id = p_user)),
        ('memory_extractions', (select count(*) from memory.memory_extractions where user_id = p_user)),
        ('user_kv', (select count(*) from memory.user_kv where user_id = p_user)),
        ('user_state', (select count(*) from memory.user_state where user_id = p_user)),
        ('short_term_state', (select count(*) from memory.short_term_state where user_id = p_user))
    ) as c (t, n)
$$;
create temp table owner_before as select * from pg_temp.row_counts(tests.recall('owner')::uuid);
create temp table stranger_before as select * from pg_temp.row_counts(tests.recall('stranger')::uuid);
select is_empty(
    $$select t from owner_before where n = 0$$,
    'before the erase, the owner has rows in every table'
);

select tests.authenticate_as_service_role();
select results_eq(
    $$select (r ->> 'user_id')::uuid, (r ->> 'memories')::integer, (r ->> 'conversations')::integer,
        (r ->> 'messages_in_other_conversations')::integer
    from (select memory.erase_user(tests.recall('owner')::uuid) as r) as x$$,
    $$values (tests.recall('owner')::uuid, 10, 1, 2)$$,
    'erase_user reports the memories, conversations and messages in other conversations it removed'
);
select tests.clear_authentication();
select results_eq(
    $$select t, n from pg_temp.row_counts(tests.recall('owner')::uuid) order by t$$,
    $$select t, 0::bigint from owner_before order by t$$,
    'the erased user has no row left in any table'
);
select results_eq(
    $$select role, content from memory.messages where conversation_id = tests.recall('together')::uuid order by id$$,
    $$values ('user', 'I am the stranger and I knit'), ('assistant', 'Cosy.')$$,
    'the erased user''s turn in the other user''s together conversation is gone, question and answer; the rest stays'
);
select results_eq(
    $$select t, n from pg_temp.row_counts(tests.recall('stranger')::uuid) order by t$$,
    $$select t, n - case when t = 'messages' then 1 else 0 end from stranger_before order by t$$,
    'the other user keeps every row but the answer to the erased user''s question'
);
select results_eq(
    $$select source_conversation_id, source_message_id from memory.memories where content = 'Knits scarves'$$,
    $$values (tests.recall('stranger_conv')::uuid, tests.recall('stranger_msg')::bigint)$$,
    'the other user''s memory keeps its source'
);
select throws_ok(
    $$select memory.erase_user(tests.recall('owner')::uuid)$$,
    'P0002', 'user not found',
    'erasing a missing user is not found'
);

-- import: the same records come back after the erase, once.
select tests.authenticate_as_service_role();
select memory.register_user(tests.recall('owner')::uuid, tests.recall('tenant_a')::uuid);
select is(
    memory.import_memories(tests.recall('export')::jsonb, tests.recall('owner')::uuid), 10,
    'import_memories adds every exported memory'
);
select results_eq(
    $$select id, content, type, category, confidence, profile_id, created_at, last_referenced_at, reference_count,
        pinned, active, archived, deleted_at, expires_at, superseded_by, origin_mode, turn_index
    from memory.memories where user_id = tests.recall('owner')::uuid order by id$$,
    $$select id, content, type, category, confidence, profile_id, created_at, last_referenced_at, reference_count,
        pinned, active, archived, deleted_at, expires_at, superseded_by, origin_mode, turn_index
    from jsonb_populate_recordset(null::memory.memories, tests.recall('export')::jsonb -> 'memories') order by id$$,
    'the imported memories are the exported ones: ids, contents, types, confidence, dates, counters, pins, status and successor links'
);
select results_eq(
    $$select count(*)::integer from memory.memories
    where user_id = tests.recall('owner')::uuid and (source_conversation_id is not null or source_message_id is not null)$$,
    array[0],
    'links to erased conversations and messages are dropped'
);
select results_eq(
    $$select id, name, is_primary from memory.profiles where user_id = tests.recall('owner')::uuid order by id$$,
    $$select (p ->> 'id')::uuid, p ->> 'name', (p ->> 'is_primary')::boolean
    from jsonb_array_elements(tests.recall('export')::jsonb -> 'profiles') as p order by 1$$,
    'the profiles come back with their ids and the primary flag'
);
select is(
    memory.import_memories(tests.recall('export')::jsonb, tests.recall('owner')::uuid), 0,
    'a second import adds nothing'
);

-- Another user importing that export: the ids are the owner's, so the importer's records take ids
-- of their own (the same at every import), the answer is what ids nobody holds would give, and the
-- owner's rows are untouched.
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(
    memory.import_memories(tests.recall('export')::jsonb), 10,
    'a stranger importing the owner''s export adds every memory, as with ids nobody holds'
);
select is(
    (select count(*)::integer from memory.memories
        where id in (select (e ->> 'id')::uuid from jsonb_array_elements(tests.recall('export')::jsonb -> 'memories') as e)),
    0, 'under ids of their own: the stranger sees none of the owner''s'
);
select is(
    (select count(*)::integer from memory.memories where superseded_by is not null),
    (select count(*)::integer from jsonb_array_elements(tests.recall('export')::jsonb -> 'memories') as e
        where e ->> 'superseded_by' is not null),
    'the successor links follow the new ids'
);
select is(memory.import_memories(tests.recall('export')::jsonb), 0, 'the stranger''s second import adds nothing');
select tests.clear_authentication();
select results_eq(
    $$select id, content, profile_id, superseded_by from memory.memories where user_id = tests.recall('owner')::uuid order by id$$,
    $$select id, content, profile_id, superseded_by
    from jsonb_populate_recordset(null::memory.memories, tests.recall('export')::jsonb -> 'memories') order by id$$,
    'the owner''s memories are untouched'
);

select * from finish();
rollback;
