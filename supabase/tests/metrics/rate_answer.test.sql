-- memory.rate_answer (seed 004's helpfulness, for the reference uplift): the one who asked rates the
-- answer, the owner or, in together mode, the participant who wrote the question; null takes it
-- back. A question, another person's answer or a missing message is P0002 and changes nothing; anon
-- is 42501, and no caller writes the column directly.
begin;
select plan(12);

select tests.create_cast('metrics-rating');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Rated')).id);
insert into memory.participants (conversation_id, user_id) values (tests.recall('conv')::uuid, tests.recall('stranger')::uuid);
select tests.authenticate_as_service_role();
select memory.add_turn(tests.recall('conv')::uuid, 'Plan my week', 'Four runs.');
select memory.add_turn(tests.recall('conv')::uuid, 'And mine?', 'Three swims.', p_author_id => tests.recall('stranger')::uuid);
select tests.clear_authentication();
select tests.remember('q1', (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and turn_number = 1 and role = 'user'));
select tests.remember('a1', (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and turn_number = 1 and role = 'assistant'));
select tests.remember('a2', (select id from memory.messages where conversation_id = tests.recall('conv')::uuid
    and turn_number = 2 and role = 'assistant'));

select tests.authenticate_as_anon();
select throws_ok(format('select memory.rate_answer(%s, true)', tests.recall('a1')), '42501', null, 'anon cannot rate');

select tests.authenticate_as(tests.recall('owner')::uuid);
select is(memory.rate_answer(tests.recall('a1')::bigint, true), true, 'the owner rates the answer to their question');
select throws_ok(format('select memory.rate_answer(%s, true)', tests.recall('q1')), 'P0002', null, 'a question is not an answer');
select throws_ok(format('select memory.rate_answer(%s, false)', tests.recall('a2')), 'P0002', null,
    'nor may the owner rate the answer to a participant''s question');
select throws_ok('select memory.rate_answer(-1, true)', 'P0002', null, 'a missing message is not found');
select throws_ok(format('update memory.messages set helpful = false where id = %s', tests.recall('a1')), '42501', null,
    'the column is written only through rate_answer');

select tests.authenticate_as(tests.recall('stranger')::uuid);
select is(memory.rate_answer(tests.recall('a2')::bigint, false), false, 'the participant rates the answer to their own question');
select throws_ok(format('select memory.rate_answer(%s, false)', tests.recall('a1')), 'P0002', null,
    'but not the answer to the owner''s');

select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(format('select memory.rate_answer(%s, false)', tests.recall('a1')), 'P0002', null,
    'a tenant admin does not rate for their users');

select tests.authenticate_as_service_role();
select throws_ok(format('select memory.rate_answer(%s, null, %L)', tests.recall('a2'), tests.recall('owner')), 'P0002', null,
    'the service role acting for the owner cannot rate the participant''s answer');
select is(memory.rate_answer(tests.recall('a2')::bigint, null), null::boolean, 'the service role takes a rating back');

select tests.clear_authentication();
select results_eq(
    format('select id, helpful from memory.messages where conversation_id = %L order by id', tests.recall('conv')),
    format('values (%s::bigint, null::boolean), (%s, true), (%s, null), (%s, null)',
        tests.recall('q1'), tests.recall('a1'), (tests.recall('a2')::bigint - 1), tests.recall('a2')),
    'only the owner''s rating stands; refused calls changed nothing'
);

select * from finish();
rollback;
