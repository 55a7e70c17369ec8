-- Why: defaults that depend on other columns or on the tenant cannot be column defaults; and the
-- columns a caller writes are checked here, on every way in, with a message that says what is
-- wrong (the table's own checks stay, naming only their constraint). An update checks only what
-- it changes, so a row stored before a rule (older metadata nested deeper) can still be renamed.
create function memory_private.conversation_defaults()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_tenant memory.tenants;
begin
    if tg_op = 'INSERT' or new.user_id is distinct from old.user_id or new.tenant_id is distinct from old.tenant_id then
        new.tenant_id := (select u.tenant_id from memory.users as u where u.id = new.user_id);
    end if;
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
    -- The table's checks of these name only their constraint: say what is wrong.
    if (tg_op = 'INSERT' or new.mode is distinct from old.mode)
        and new.mode not in ('chat', 'astro', 'profile', 'together', 'swiss') then
        raise exception using errcode = '23514', message = format('unknown conversation mode %L', new.mode),
            hint = 'One of: chat, astro, profile, together, swiss';
    end if;
    if (tg_op = 'INSERT' or new.window_turns is distinct from old.window_turns) and new.window_turns <= 0 then
        raise exception using errcode = '23514', message = 'window_turns must be positive';
    end if;
    if new.title is not null and (tg_op = 'INSERT' or new.title is distinct from old.title) then
        perform memory_private.check_text('title', new.title, 500);
    end if;
    if tg_op = 'INSERT' or new.metadata is distinct from old.metadata then
        perform memory_private.check_json('metadata', new.metadata, 'object', 100000);
    end if;
    return new;
end
$$;

create trigger conversations_defaults
before insert or update of user_id, tenant_id, title, mode, metadata, window_turns on memory.conversations
for each row execute function memory_private.conversation_defaults();

revoke all on function memory_private.conversation_defaults() from public, anon, authenticated, service_role;
