-- Key-value, short-term and state rows are checked on every way in (triggers), the Data API's too,
-- with what is wrong (22023) and the writers' JSON limits; kv_set, short_term_set and state_set leave
-- their checks to them.
set check_function_bodies = off;

create or replace function memory_private.check_key_value()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    perform memory_private.check_text('key', new.key, 200);
    perform memory_private.check_json('value', new.value, nullif(tg_argv[0], ''), 100000);
    return new;
end
$function$;

create or replace function memory_private.check_state_mode()
returns trigger
language plpgsql
set search_path to ''
as $function$
begin
    perform memory_private.check_text('mode', new.mode, 100);
    return new;
end
$function$;

create or replace function memory.kv_set(p_key text, p_value jsonb, p_user_id uuid default null::uuid)
returns memory.user_kv
language plpgsql
set search_path to ''
as $function$
declare
    v_row memory.user_kv;
begin
    insert into memory.user_kv as k (user_id, key, value)
    values (memory_private.writing_user(p_user_id), p_key, p_value)
    on conflict (user_id, key) do update set value = excluded.value, updated_at = now()
    returning k.* into v_row;
    return v_row;
end
$function$;

create or replace function memory.short_term_set(
    p_key text, p_value jsonb, p_ttl interval default null::interval, p_user_id uuid default null::uuid
)
returns memory.short_term_state
language plpgsql
set search_path to ''
as $function$
declare
    v_ttl interval := coalesce(p_ttl, (memory_private.setting('short_term_ttl') #>> '{}')::interval);
    v_row memory.short_term_state;
begin
    if v_ttl <= interval '0' or v_ttl > interval '100 years' then
        raise exception using errcode = '22023', message = 'ttl must be positive and at most 100 years';
    end if;
    insert into memory.short_term_state (user_id, key, value, expires_at)
    values (memory_private.writing_user(p_user_id), p_key, p_value, now() + v_ttl)
    on conflict (user_id, key) do update
    set value = excluded.value, expires_at = excluded.expires_at, updated_at = now()
    returning * into v_row;
    return v_row;
end
$function$;

create or replace function memory.state_set(p_mode text, p_user_id uuid default null::uuid)
returns memory.user_state
language plpgsql
set search_path to ''
as $function$
declare
    v_row memory.user_state;
begin
    insert into memory.user_state as s (user_id, mode)
    values (memory_private.writing_user(p_user_id), p_mode)
    on conflict (user_id) do update set mode = excluded.mode, updated_at = now()
    returning s.* into v_row;
    return v_row;
end
$function$;

create trigger short_term_state_checked before insert or update of key,
value on memory.short_term_state for each row execute function memory_private.check_key_value('');

create trigger user_kv_checked before insert or update of key,
value on memory.user_kv for each row execute function memory_private.check_key_value('object');

create trigger user_state_checked before insert or update of mode on memory.user_state
for each row execute function memory_private.check_state_mode();


revoke all on function memory.kv_set(text, jsonb, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.kv_set(text, jsonb, uuid) to authenticated, service_role;
revoke all on function memory.short_term_set(text, jsonb, interval, uuid) from public,
anon,
authenticated,
service_role;
grant execute on function memory.short_term_set(text, jsonb, interval, uuid) to authenticated, service_role;
revoke all on function memory.state_set(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.state_set(text, uuid) to authenticated, service_role;
revoke all on function memory_private.check_key_value() from public, anon, authenticated, service_role;
revoke all on function memory_private.check_state_mode() from public, anon, authenticated, service_role;
