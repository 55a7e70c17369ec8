-- A provider found down (its kind and endpoint) is kept for the next worker: provider_unavailable
-- notes it (a later note keeps the pause's new length and never shortens the wait),
-- provider_outages tells how long its jobs still wait, provider_answered ends it. Only the service calls them: anon, the owner, a
-- stranger and a tenant admin get 42501 and cannot read the table. Bad input changes nothing.
begin;
select plan(23);

select tests.create_cast('provider-outages');

create temporary table outage_calls (name text, call text) on commit drop;
grant select on outage_calls to anon, authenticated;
insert into outage_calls (name, call) values
    ('provider_unavailable', $$select memory.provider_unavailable('model', 'http://llm', '15 seconds', '15 seconds')$$),
    ('provider_answered', $$select memory.provider_answered('model', 'http://llm')$$),
    ('provider_outages', $$select * from memory.provider_outages()$$),
    ('the table', $$select * from memory_private.provider_outages$$);

select tests.authenticate_as_anon();
select throws_ok(c.call, '42501', null, 'anon cannot use ' || c.name) from pg_temp.outage_calls as c where c.name in ('provider_unavailable', 'the table');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(c.call, '42501', null, 'the owner cannot use ' || c.name) from pg_temp.outage_calls as c where c.name in ('provider_answered', 'the table');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(c.call, '42501', null, 'a stranger cannot use ' || c.name) from pg_temp.outage_calls as c where c.name in ('provider_outages', 'the table');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(c.call, '42501', null, 'a tenant admin cannot use ' || c.name) from pg_temp.outage_calls as c where c.name in ('provider_unavailable', 'the table');

select tests.authenticate_as_service_role();
select is_empty($$select * from memory.provider_outages()$$, 'no provider is down to begin with');
select lives_ok(
    $$select memory.provider_unavailable('model', 'http://llm', '15 seconds', '20 seconds')$$, 'the service notes the model down'
);
select results_eq(
    $$select provider, endpoint, pause_seconds, wait_seconds > 19 and wait_seconds <= 20 from memory.provider_outages()$$,
    $$values ('model'::text, 'http://llm'::text, 15::double precision, true)$$,
    'its jobs wait the pause (here a longer Retry-After) from now'
);
select lives_ok(
    $$select memory.provider_unavailable('model', 'http://llm', '30 seconds', '1 second')$$, 'a second note, with a shorter wait'
);
select results_eq(
    $$select pause_seconds, wait_seconds > 19 from memory.provider_outages()$$,
    $$values (30::double precision, true)$$,
    'the pause keeps its new length; the wait is never shortened'
);
select throws_ok(
    $$select memory.provider_unavailable('the cloud', 'http://llm', '15 seconds', '15 seconds')$$, '22023',
    'provider must be ''model'' or ''embeddings server'', got ''the cloud''',
    'only the model and the embeddings server are providers'
);
select throws_ok(
    $$select memory.provider_unavailable('embeddings server', 'http://e', '0 seconds', '15 seconds')$$, '22023',
    'pause must be more than 0 and at most a day, got 00:00:00',
    'a pause has a length'
);
select throws_ok(
    $$select memory.provider_unavailable('model', repeat('x', 2001), '15 seconds', '15 seconds')$$, '22023', null,
    'an endpoint is a URL, not a megabyte'
);
select throws_ok(
    $$select memory.provider_unavailable('model', 'http://llm', '15 seconds', '1000 years')$$, '22023', null,
    'a wait past a day is refused'
);
select results_eq($$select count(*)::int from memory.provider_outages()$$, array[1], 'bad input noted nothing');
update memory_private.provider_outages set paused_until = now() - interval '1 minute';
select results_eq(
    $$select wait_seconds from memory.provider_outages()$$, array[0::double precision],
    'a pause that is over waits no longer'
);
select ok(not memory.provider_answered('model', 'http://other'), 'an answer from another endpoint ends nothing');
select ok(memory.provider_answered('model', 'http://llm'), 'an answer ends the outage');
select ok(not memory.provider_answered('model', 'http://llm'), 'and says when there was none');
select is_empty($$select * from memory.provider_outages()$$, 'nothing is down any more');

select tests.clear_authentication();
select * from finish();
rollback;
