-- Why: defaults that depend on other columns or on the tenant cannot be column defaults.
create function memory_private.conversation_defaults()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_tenant memory.tenants;
begin
    new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    if tg_op = 'INSERT' then
        select t.* into v_tenant from memory.tenants as t where t.id = new.tenant_id;
        new.remember := coalesce(new.remember, new.mode <> 'swiss');
        new.ttl := coalesce(
            new.ttl, v_tenant.conversation_ttl, (memory_private.setting('conversation_ttl') #>> '{}')::interval
        );
        new.window_turns := coalesce(
            new.window_turns, v_tenant.conversation_window, (memory_private.setting('conversation_window') #>> '{}')::integer
        );
        -- Bounded above too: messages expire at created_at + ttl, and past the year 9999 a time
        -- cannot be read back by a client.
        if new.ttl <= interval '0' or new.ttl > interval '100 years' then
            raise exception using errcode = '23514', message = 'ttl must be positive and at most 100 years';
        end if;
        new.expires_at := new.created_at + new.ttl;
    end if;
    return new;
end
$$;

create trigger conversations_defaults
before insert or update of user_id, tenant_id on memory.conversations
for each row execute function memory_private.conversation_defaults();

revoke all on function memory_private.conversation_defaults() from public, anon, authenticated, service_role;
