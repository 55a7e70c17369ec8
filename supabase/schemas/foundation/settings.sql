-- Global settings: the defaults a tenant or a conversation may override.
create table memory_private.settings (
    key text primary key check (key ~ '^[a-z][a-z0-9_]*$'),
    value jsonb not null,
    description text not null
);

alter table memory_private.settings enable row level security;

grant select, insert, update, delete on memory_private.settings to service_role;

-- Why: every behaviour reads its defaults from one place, so a team tunes the kit with an update.
-- plpgsql, not sql: its lookup keeps its plan for the session, where a sql function with a SET
-- clause plans it again on every call (a hot path reads several settings per call).
create function memory_private.setting(p_key text)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
    return (select s.value from memory_private.settings as s where s.key = p_key);
end
$$;

revoke all on function memory_private.setting(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.setting(text) to authenticated, service_role;

-- A numeric setting of at least p_min, or 22023 naming it: a team's typo stops the behaviour that
-- reads it with a clear error instead of a cast error or a silent zero.
create function memory_private.number_setting(p_key text, p_min double precision)
returns double precision
language plpgsql
stable
set search_path = ''
as $$
declare
    v_value jsonb := memory_private.setting(p_key);
begin
    if jsonb_typeof(v_value) is distinct from 'number' or v_value::double precision < p_min then
        raise exception using errcode = '22023',
            message = format('setting %s must be a number of at least %s', p_key, p_min);
    end if;
    return v_value::double precision;
end
$$;

revoke all on function memory_private.number_setting(text, double precision)
from public, anon, authenticated, service_role;
grant execute on function memory_private.number_setting(text, double precision) to authenticated, service_role;

insert into memory_private.settings (key, value, description) values
('conversation_ttl', 'null', 'Default time to live of conversation messages (an interval, null = keep forever).'),
('conversation_window', 'null', 'Default rolling window in turns (null = unlimited).'),
('sweep_batch_size', '5000', 'Rows the retention sweep deletes per batch.'),
('sweep_max_batches', '200', 'Batches one scheduled retention sweep may run before yielding.'),
(
    'sweep_pause', '1',
    'After each batch the scheduled sweep pauses for this many times the batch''s own time, so it takes at most '
    'a share of a core from the writers (0: no pause).'
),
('short_term_ttl', '"5 minutes"', 'Default lifetime of short-lived state (seed 001 clarification state).'),
('cron_history_retention', '"7 days"', 'How long pg_cron run details are kept.');
