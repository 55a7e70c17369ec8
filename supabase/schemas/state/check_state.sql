-- Why: key-value, short-term and state rows are written through the Data API too, and the tables'
-- checks refuse a bad one by naming a constraint (user_kv_value_check): these triggers say what is
-- wrong (22023) on every way in, kv_set, short_term_set and state_set included, and hold values to
-- the writers' JSON limits; an update checks only what it changes. TG_ARGV[0]: the JSON type a
-- value must have ('' for any).
create function memory_private.check_key_value()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' or new.key is distinct from old.key then
        perform memory_private.check_text('key', new.key, 200);
    end if;
    if tg_op = 'INSERT' or new.value is distinct from old.value then
        perform memory_private.check_json('value', new.value, nullif(tg_argv[0], ''), 100000);
    end if;
    return new;
end
$$;

revoke all on function memory_private.check_key_value() from public, anon, authenticated, service_role;

create trigger user_kv_checked
before insert or update of key, value on memory.user_kv
for each row execute function memory_private.check_key_value('object');

create trigger short_term_state_checked
before insert or update of key, value on memory.short_term_state
for each row execute function memory_private.check_key_value('');

create function memory_private.check_state_mode()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' or new.mode is distinct from old.mode then
        perform memory_private.check_text('mode', new.mode, 100);
    end if;
    return new;
end
$$;

revoke all on function memory_private.check_state_mode() from public, anon, authenticated, service_role;

create trigger user_state_checked
before insert or update of mode on memory.user_state
for each row execute function memory_private.check_state_mode();
