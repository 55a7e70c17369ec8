-- A month backfilled for every profile that had conversations in it (memory.backfill_month_for_all),
-- for a cron outage longer than the schedulers look back.
set check_function_bodies = off;

create or replace function memory.backfill_month_for_all(
    p_year integer, p_month integer, p_regenerate boolean default false
)
returns integer
language plpgsql
set search_path to ''
as $function$
declare
    v_month_start date;
    v_profile record;
    v_count integer := 0;
begin
    if p_year is null or p_month is null or p_month not between 1 and 12 or p_year not between 1970 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range';
    end if;
    v_month_start := make_date(p_year, p_month, 1);
    for v_profile in
        select distinct p.id, p.timezone
        from memory.conversation_summaries as s
        join memory.profiles as p on p.id = s.profile_id
        -- A day either side of the month's weeks (in UTC) holds them in every time zone; the
        -- profile's own weeks decide.
        where s.created_at >= (date_trunc('week', v_month_start::timestamp) - interval '1 day') at time zone 'UTC'
            and s.created_at < (memory_private.month_end(v_month_start) + interval '1 day') at time zone 'UTC'
            and date_trunc('month', memory_private.local_week_start(s.created_at, p.timezone) + 3) = v_month_start
        order by p.id
    loop
        if memory_private.month_end(v_month_start) <= (now() at time zone v_profile.timezone)::date then
            v_count := v_count + memory_private.backfill_month(v_profile.id, p_year, p_month, p_regenerate);
        end if;
    end loop;
    return v_count;
end
$function$;


revoke all on function memory.backfill_month_for_all(integer, integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory.backfill_month_for_all(integer, integer, boolean) to service_role;
