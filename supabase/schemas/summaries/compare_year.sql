-- Why: seed 004's compare-yearly-patterns, on demand when a month is viewed: the stored
-- comparison if there is one, else a queued job composing it from the two stored monthly
-- summaries (never from raw memories). A month that cannot exist is refused (22023), not
-- answered as one whose summaries are missing.
create function memory.compare_year(p_profile_id uuid, p_year integer, p_month integer)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_profile memory.profiles;
    v_existing memory.yearly_comparisons;
begin
    select p.* into v_profile from memory.profiles as p where p.id = p_profile_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    if p_month is null or p_month not between 1 and 12 or p_year is null or p_year not between 1971 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range',
            hint = 'A month is 1 to 12 of a year from 1971 to 9999 (compared with the year before).';
    end if;
    select y.* into v_existing from memory.yearly_comparisons as y
    where y.profile_id = p_profile_id and y.year = p_year and y.month = p_month;
    if found then
        return jsonb_build_object('status', 'ready', 'comparison', v_existing.comparison);
    end if;
    if not exists (
        select 1 from memory.monthly_summaries as m
        where m.profile_id = p_profile_id and ((m.year = p_year and m.month = p_month)
            or (m.year = p_year - 1 and m.month = p_month))
        group by m.profile_id having count(*) = 2
    ) then
        return jsonb_build_object('status', 'unavailable', 'reason', 'both months need a monthly summary');
    end if;
    perform memory_private.enqueue_year_comparison(v_profile.id, p_year, p_month);
    return jsonb_build_object('status', 'queued');
end
$$;

revoke all on function memory.compare_year(uuid, integer, integer) from public, anon, authenticated, service_role;
grant execute on function memory.compare_year(uuid, integer, integer) to authenticated, service_role;
