-- A user takes chat_rate_limit chat requests and search_rate_limit searches a minute; one more is
-- 54000 and takes nothing. The minute's count starts again in the next minute, the kinds count
-- apart, a limit of 0 is none, and a bad kind is 22023. A signed-in user takes only their own
-- (a stranger or a tenant admin naming the owner is 42501), the service role takes any user's,
-- anon none; a signed-in user's first request registers them.
begin;
select plan(17);

select tests.create_cast('requests');
update memory_private.settings set value = '2' where key = 'chat_rate_limit';
update memory_private.settings set value = '1' where key = 'search_rate_limit';

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.take_request('chat'), 1, 'the owner''s first chat request leaves one this minute');
select is(memory.take_request('chat'), 0, 'the second leaves none');
select throws_ok(
    $$select memory.take_request('chat')$$, '54000', 'rate limit: chat requests, 2 per user per minute',
    'a third is refused'
);
select is(memory.take_request('search'), 0, 'searches count apart from chats');
select throws_ok($$select memory.take_request('search')$$, '54000', null, 'and have their own limit');
select throws_ok($$select memory.take_request('title')$$, '22023', 'the kind of request must be chat or search',
    'an unknown kind is refused');

select tests.clear_authentication();
select is(
    (select used from memory_private.request_windows where user_id = tests.recall('owner')::uuid and kind = 'chat'),
    2, 'the refused request took nothing'
);
update memory_private.request_windows set window_start = window_start - interval '1 minute'
where user_id = tests.recall('owner')::uuid;
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.take_request('chat'), 1, 'the next minute counts from one again');

select throws_ok(
    format($$select memory.take_request('chat', %L)$$, tests.recall('stranger')),
    '42501', 'a user takes only their own requests', 'the owner cannot take a stranger''s requests'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(
    format($$select memory.take_request('chat', %L)$$, tests.recall('owner')),
    '42501', 'a user takes only their own requests', 'nor can their tenant''s admin take the owner''s'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(
    format($$select memory_private.take_request(%L, 'chat')$$, tests.recall('owner')),
    '42501', 'a user takes only their own requests', 'a stranger calling the private helper cannot either'
);
select tests.authenticate_as_anon();
select throws_ok($$select memory.take_request('chat')$$, '42501', null, 'anon cannot take any');

select tests.authenticate_as_service_role();
select is(memory.take_request('chat', tests.recall('stranger')::uuid), 1, 'the service role takes a named user''s');
select throws_ok($$select memory.take_request('chat')$$, '22023', 'user id required', 'and must name one');

select tests.clear_authentication();
update memory_private.settings set value = '0' where key = 'chat_rate_limit';
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.take_request('chat'), null, 'a limit of 0 is none');

select tests.clear_authentication();
select tests.remember('newcomer', tests.create_auth_user('newcomer@requests.test'));
select tests.authenticate_as(tests.recall('newcomer')::uuid);
select is(memory.take_request('search'), 0, 'a signed-in user''s first request registers them');
select tests.clear_authentication();
select ok(exists (select 1 from memory.users where id = tests.recall('newcomer')::uuid), 'as a user of the kit');

select * from finish();
rollback;
