-- memory.delete_tenant_message(id, tenant): seed 003's delete_message, isolated by tenant. A message
-- of another tenant, or of the system (a null tenant) named with a tenant, is not found (P0002) and
-- stays, whoever calls; anon is 42501; a stranger and the tenant's admin are not found; the owner
-- and service_role delete with the message's own tenant, a null one for users of no tenant.
begin;
select plan(10);

select tests.create_cast('rpc-delete-tenant-message');
select tests.remember('system_user', tests.create_auth_user('rpc-delete-tenant-message.system@supamem.test'));
select memory.register_user(tests.recall('system_user')::uuid);
select tests.remember('conv', (memory.create_conversation(tests.recall('owner')::uuid, 'Tenant A')).id);
select tests.remember('loose', (memory.create_conversation(tests.recall('system_user')::uuid, 'No tenant')).id);
select tests.remember('q1', user_message_id), tests.remember('a1', assistant_message_id)
from memory.add_turn(tests.recall('conv')::uuid, 'q1', 'a1');
select tests.remember('s1', user_message_id) from memory.add_turn(tests.recall('loose')::uuid, 's1', 'answer');

select tests.authenticate_as_anon();
select throws_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('q1'), tests.recall('tenant_a')),
    '42501', null, 'anon cannot delete');
select tests.authenticate_as(tests.recall('stranger')::uuid);
select throws_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('q1'), tests.recall('tenant_a')),
    'P0002', null, 'a stranger of the same tenant gets not found');
select tests.authenticate_as(tests.recall('admin_a')::uuid);
select throws_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('q1'), tests.recall('tenant_a')),
    'P0002', null, 'the tenant''s admin reads but does not delete');
select tests.authenticate_as(tests.recall('owner')::uuid);
select throws_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('q1'), tests.recall('tenant_b')),
    'P0002', null, 'the owner naming another tenant gets not found');
select throws_ok(format('select memory.delete_tenant_message(%s, null)', tests.recall('q1')),
    'P0002', null, 'nor as the system''s');
select lives_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('q1'), tests.recall('tenant_a')),
    'the owner deletes with their tenant');

select tests.authenticate_as_service_role();
select throws_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('a1'), tests.recall('tenant_b')),
    'P0002', null, 'service_role naming another tenant gets not found');
select throws_ok(format('select memory.delete_tenant_message(%s, %L)', tests.recall('s1'), tests.recall('tenant_a')),
    'P0002', null, 'a system message is no tenant''s');
select lives_ok(format('select memory.delete_tenant_message(%s, null)', tests.recall('s1')),
    'service_role deletes a system message with a null tenant');

select tests.clear_authentication();
select results_eq(
    format('select id from memory.messages where conversation_id in (%L, %L) and role = ''user'' or id = %s order by id',
        tests.recall('conv'), tests.recall('loose'), tests.recall('a1')),
    format('values (%s::bigint)', tests.recall('a1')),
    'what the refused calls named stays; what was deleted is gone'
);

select * from finish();
rollback;
