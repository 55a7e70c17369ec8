-- Week and month arithmetic in one place. A week is the ISO week (Monday to Sunday) in the
-- profile's time zone; a week belongs to the month that holds its Thursday, as ISO years do.
create function memory_private.local_week_start(p_at timestamptz, p_time_zone text)
returns date
language plpgsql
stable
set search_path = ''
as $$
begin
    return date_trunc('week', p_at at time zone p_time_zone)::date;
end
$$;

revoke all on function memory_private.local_week_start(timestamp with time zone, text)
from public, anon, authenticated, service_role;
grant execute on function memory_private.local_week_start(timestamp with time zone, text)
to authenticated, service_role;

-- The day after a month's last week (the week holding its last Thursday) ends: when the month is
-- over, for its scheduler and for a backfill.
create function memory_private.month_end(p_month_start date)
returns date
language plpgsql
immutable
set search_path = ''
as $$
begin
    -- As a timestamp: a date would be truncated as a timestamptz, in the session's time zone.
    return date_trunc('week', ((p_month_start + interval '1 month')::date - 4)::timestamp)::date + 7;
end
$$;

revoke all on function memory_private.month_end(date) from public, anon, authenticated, service_role;
grant execute on function memory_private.month_end(date) to authenticated, service_role;
