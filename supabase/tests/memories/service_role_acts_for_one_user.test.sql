-- The memory RPCs that take a memory id also take p_user_id, so the service role can act for one
-- user: another user's memory is then not found (P0002) and nothing changes, as under RLS.
-- revise_memory with a null content keeps the old text.
begin;
select plan(7);

select tests.authenticate_as_service_role();
select tests.remember('ana', memory.user_id_for('memories-acts-for.ana'));
select tests.remember('ben', memory.user_id_for('memories-acts-for.ben'));
insert into memory.profiles (user_id, is_primary) values (tests.recall('ana')::uuid, true), (tests.recall('ben')::uuid, true);
select tests.remember('m', (select memory_id from memory.remember('Plays the oboe', 'fact', tests.recall('ana')::uuid)));

select throws_ok(
    format('select memory.forget(%L, %L)', tests.recall('m'), tests.recall('ben')), 'P0002', null,
    'forget for another user is not found'
);
select throws_ok(
    format('select memory.pin_memory(%L, true, %L)', tests.recall('m'), tests.recall('ben')), 'P0002', null,
    'pin_memory for another user is not found'
);
select throws_ok(
    format('select memory.revise_memory(%L, %L, p_user_id => %L)', tests.recall('m'), 'x', tests.recall('ben')), 'P0002', null,
    'revise_memory for another user is not found'
);
select results_eq(
    $$select active, pinned, deleted_at is null from memory.memories where id = tests.recall('m')::uuid$$,
    $$values (true, false, true)$$,
    'and nothing changed'
);
select is(
    (memory.revise_memory(tests.recall('m')::uuid, null, p_type => 'pattern', p_user_id => tests.recall('ana')::uuid)).content,
    'Plays the oboe', 'the owner revises; a null content keeps the text'
);
select memory.forget((select id from memory.memories where user_id = tests.recall('ana')::uuid and active), tests.recall('ana')::uuid);
select throws_ok(
    format('select memory.restore_memory((select id from memory.memories where user_id = %L and deleted_at is not null), %L)',
        tests.recall('ana'), tests.recall('ben')),
    'P0002', null, 'restore_memory for another user is not found'
);
select isnt_empty(
    format('select memory.restore_memory((select id from memory.memories where user_id = %L and deleted_at is not null), %L)',
        tests.recall('ana'), tests.recall('ana')),
    'the owner restores'
);

select * from finish();
rollback;
