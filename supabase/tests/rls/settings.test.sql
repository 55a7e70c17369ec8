-- memory_private.settings: the kit's global defaults are readable and writable by service_role
-- only; signed-in users reach them only through memory_private.setting(), which returns one
-- value, never the table; anon reaches nothing.
begin;
select plan(6);

select tests.remember('user', tests.create_auth_user('rls-settings.user@supamem.test'));
select tests.authenticate_as_anon();
select throws_ok('select * from memory_private.settings', '42501', null, 'anon cannot read settings');

select tests.authenticate_as(tests.recall('user')::uuid);
select throws_ok('select * from memory_private.settings', '42501', null, 'a signed-in user cannot read the settings table');
select throws_ok(
    $$update memory_private.settings set value = '1' where key = 'sweep_batch_size'$$,
    '42501', null, 'a signed-in user cannot change a setting'
);
select is(
    memory_private.setting('short_term_ttl') #>> '{}',
    '5 minutes',
    'a signed-in user reads one setting through memory_private.setting()'
);

select tests.authenticate_as_service_role();
select results_eq(
    $$select key from memory_private.settings where key = 'sweep_batch_size'$$,
    array['sweep_batch_size'],
    'service_role reads the settings'
);
select results_eq(
    $$update memory_private.settings set value = '100' where key = 'sweep_batch_size' returning value::integer$$,
    array[100],
    'service_role changes a setting'
);

select * from finish();
rollback;
