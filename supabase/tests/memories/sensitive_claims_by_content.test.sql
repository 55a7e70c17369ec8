-- A claim drawn from a conversation is sensitive by what it says, not only by the model's tag:
-- untagged medical and financial claims keep at most confidence 0.3; look-alike words
-- ("insulate") and other claims keep theirs. The terms are data the service role reads and only
-- the table owner writes.
begin;
select plan(9);

select tests.authenticate_as_service_role();
select tests.remember('u', memory.user_id_for('memories-sensitive-content.u'));
with p as (insert into memory.profiles (user_id, name, is_primary) values (tests.recall('u')::uuid, 'Main', true) returning id)
select tests.remember('p', id) from p;
select tests.remember('c', (memory.create_conversation(tests.recall('u')::uuid, null, 'profile', tests.recall('p')::uuid)).id);
create temp table claims (content text, expected numeric) on commit drop;
insert into claims values
('Takes insulin every morning', 0.3), ('Their salary is 90k', 0.3), ('Has a mortgage on the flat', 0.3),
('Likes tennis', 0.9), ('Wants to insulate the attic', 0.9);
grant select on claims to service_role;

create temp table stored on commit drop as
select cl.content, cl.expected, (select r.memory_id from memory.remember(
    cl.content, 'fact', tests.recall('u')::uuid, p_confidence => 0.9,
    p_source_message_id => (select t.user_message_id from memory.add_turn(tests.recall('c')::uuid, cl.content, 'Noted.') as t)
) as r) as memory_id
from claims as cl;
select is(m.confidence, s.expected, format('"%s", untagged, keeps confidence %s', s.content, s.expected))
from stored as s join memory.memories as m on m.id = s.memory_id
order by s.content;

select tests.remember('outright', (select memory_id from memory.remember('Takes insulin at night', 'fact', tests.recall('u')::uuid, p_confidence => 0.9)));
select is(
    (select confidence from memory.memories where id = tests.recall('outright')::uuid),
    0.9, 'a claim the user states outright (no source message) keeps its confidence'
);
select isnt_empty($$select term from memory_private.sensitive_terms where term = 'insulin'$$, 'the service role reads the terms');
select throws_ok(
    $$insert into memory_private.sensitive_terms (term, category) values ('tennis', 'health')$$,
    '42501', null, 'the service role cannot add a term'
);
select tests.clear_authentication();
select tests.remember('user', tests.create_auth_user('memories-sensitive-content.user@supamem.test'));
select tests.authenticate_as(tests.recall('user')::uuid);
select throws_ok($$select term from memory_private.sensitive_terms$$, '42501', null, 'a signed-in user cannot read the terms');

select * from finish();
rollback;
