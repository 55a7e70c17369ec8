-- Postings (memory_private.search_postings): the fold posts each message's lexemes with their
-- frequency and the message's length, and lexical search ranks the same from them as from the
-- messages not folded yet, under the candidates' bound too. A deleted message's postings leave
-- with the next fold (search leaves the message out at once); an edited message is noted once,
-- with the words that were counted, and the next fold counts and posts its words now. Users read
-- only their own postings; a tenant admin none; only the fold writes them; anon reaches nothing.
-- Autovacuum visits the table after every 50,000 new postings, so a search's index-only read of the
-- newest postings finds them visible without the heap.
begin;
select plan(20);

select tests.create_cast('search-postings');
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Posts', p_window_turns => 1000)).id);
select tests.remember('theirs', (memory.create_conversation(tests.recall('stranger')::uuid, 'Theirs', p_window_turns => 1000)).id);
select count(memory.add_message(tests.recall('conv')::uuid, 'user', format('Morning coffee number %s', i))) from generate_series(1, 8) as i;
select tests.remember('both', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Coffee at the zeppelin, coffee again')).id);
select tests.remember('harbour', (memory.add_message(tests.recall('conv')::uuid, 'user', 'Zeppelins over the harbour')).id);
select count(memory.add_message(tests.recall('conv')::uuid, 'user', format('Evening coffee number %s', i))) from generate_series(1, 3) as i;
select memory.add_message(tests.recall('theirs')::uuid, 'user', 'Zeppelin coffee');

-- The same searches before and after the fold, with every match scored and with three.
create temporary table searches (query text, bound text);
insert into searches values ('coffee zeppelin', '500'), ('coffee', '500'), ('coffee zeppelin', '3'), ('coffee', '3'),
    ('harbour coffee', '3');
create temporary table ranked (query text, bound text, folded boolean, message_id bigint, score double precision);
grant select, insert on ranked to authenticated;
create function pg_temp.rank(p_folded boolean) returns void language plpgsql as $$
declare
    v_search record;
begin
    for v_search in select * from searches loop
        perform tests.clear_authentication();
        update memory_private.settings set value = v_search.bound::jsonb where key = 'lexical_candidates';
        perform tests.authenticate_as(tests.recall('owner')::uuid);
        insert into ranked
        select v_search.query, v_search.bound, p_folded, l.message_id, l.score
        from memory_private.lexical_messages(tests.recall('owner')::uuid, v_search.query) as l;
    end loop;
    perform tests.clear_authentication();
    update memory_private.settings set value = '500' where key = 'lexical_candidates';
end
$$;
select pg_temp.rank(false);

select tests.authenticate_as_service_role();
select ok(memory_private.fold_search_terms() >= 14, 'a fold counts every message not counted yet');
select tests.clear_authentication();
select results_eq(
    format($$select lexeme, frequency, length from memory_private.search_postings where message_id = %s order by lexeme$$,
        tests.recall('both')),
    $$values ('coffe'::text, 2::smallint, 2), ('zeppelin', 1::smallint, 2)$$,
    'a message is posted under each of its lexemes, with the lexeme''s frequency and the message''s length (its lexemes)'
);
select is(
    (select count(*) from memory_private.search_postings where user_id = tests.recall('owner')::uuid and lexeme = 'coffe'),
    12::bigint, 'a lexeme''s postings are the messages of its user that hold it'
);

select pg_temp.rank(true);
select tests.authenticate_as(tests.recall('owner')::uuid);
select set_eq(
    $$select query, bound, message_id, score from ranked where folded$$,
    $$select query, bound, message_id, score from ranked where not folded$$,
    'lexical search ranks the same from the postings as from the messages not folded yet, bounded or not'
);
select is(
    (select count(*) from ranked where folded and bound = '3' and query = 'coffee'), 3::bigint,
    'with a bound of three, the postings give three candidates'
);

-- Deleted: out of search at once, out of the postings at the next fold.
select tests.clear_authentication();
delete from memory.messages where id = tests.recall('harbour')::bigint;
select is(
    (select count(*) from memory_private.search_postings where message_id = tests.recall('harbour')::bigint),
    2::bigint, 'a deleted message keeps its postings until the next fold'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is_empty(
    format($$select 1 from memory_private.lexical_messages(%L, 'harbour zeppelin') where message_id = %s$$,
        tests.recall('owner'), tests.recall('harbour')),
    'search leaves it out at once'
);
select tests.authenticate_as_service_role();
select memory_private.fold_search_terms();
select tests.clear_authentication();
select is_empty(
    format($$select 1 from memory_private.search_postings where message_id = %s$$, tests.recall('harbour')),
    'the next fold takes its postings out'
);

-- Edited twice before the fold: one note, holding the words that were counted.
update memory.messages set content = 'Tea at the airship' where id = tests.recall('both')::bigint;
update memory.messages set content = 'Tea on the airship, then tea again' where id = tests.recall('both')::bigint;
select results_eq(
    format($$select search from memory_private.search_unfolds where message_id = %s$$, tests.recall('both')),
    $$values (to_tsvector('english', 'Coffee at the zeppelin, coffee again'))$$,
    'an edited message is noted once, with the words the fold counted'
);
select tests.authenticate_as_service_role();
select memory_private.fold_search_terms();
select tests.clear_authentication();
select results_eq(
    format($$select lexeme, frequency from memory_private.search_postings where message_id = %s order by lexeme$$,
        tests.recall('both')),
    $$values ('airship'::text, 1::smallint), ('tea', 2::smallint)$$,
    'the next fold posts its words now, and no longer the old ones'
);
select results_eq(
    format($$select lexeme, documents from memory_private.search_terms where user_id = %L
        and lexeme in ('coffe', 'zeppelin', 'tea', 'airship') order by lexeme$$, tests.recall('owner')),
    $$values ('airship'::text, 1), ('coffe', 11), ('tea', 1), ('zeppelin', 0)$$,
    'and counts its words now in the term statistics instead of the old ones'
);
select tests.authenticate_as(tests.recall('owner')::uuid);
select is(
    (select message_id from memory_private.lexical_messages(tests.recall('owner')::uuid, 'airship tea')),
    tests.recall('both')::bigint, 'search finds the edited message by its new words'
);

select tests.authenticate_as_anon();
select throws_ok('select * from memory_private.search_postings', '42501', null, 'anon cannot read postings');
select tests.authenticate_as(tests.recall('owner')::uuid);
select ok(
    (select count(*) from memory_private.search_postings) > 0
    and not exists (select 1 from memory_private.search_postings where user_id <> tests.recall('owner')::uuid),
    'the owner reads their own postings only'
);
select throws_ok(
    $$delete from memory_private.search_postings$$, '42501', null, 'a signed-in user cannot change postings'
);
select tests.authenticate_as(tests.recall('stranger')::uuid);
select is_empty(
    format($$select 1 from memory_private.search_postings where user_id = %L$$, tests.recall('owner')),
    'a stranger reads none of the owner''s postings'
);
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select is_empty('select 1 from memory_private.search_postings', 'a tenant admin reads no user''s postings');
select tests.authenticate_as_service_role();
select ok(
    exists (select 1 from memory_private.search_postings where user_id = tests.recall('stranger')::uuid),
    'service_role reads every user''s postings'
);
select throws_ok(
    format($$insert into memory_private.search_postings values (%L, 'tea', 1, 1, 1)$$, tests.recall('owner')),
    '42501', null, 'service_role does not write postings: the fold does'
);

select is(
    (select reloptions from pg_class where oid = 'memory_private.search_postings'::regclass),
    array['autovacuum_vacuum_insert_scale_factor=0', 'autovacuum_vacuum_insert_threshold=50000'],
    'autovacuum visits the postings after every 50,000 new ones, whatever the table''s size'
);

select * from finish();
rollback;
