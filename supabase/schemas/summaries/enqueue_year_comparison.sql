-- Why: a signed-in user viewing their month may ask for the comparison; only of their own
-- profile (RLS hid the others from compare_year already; this checks again as the owner).
create function memory_private.enqueue_year_comparison(p_profile_id uuid, p_year integer, p_month integer)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_user uuid := (select p.user_id from memory.profiles as p where p.id = p_profile_id);
begin
    if v_user is null or ((select auth.uid()) is not null and v_user <> (select auth.uid())) then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    if p_month is null or p_month not between 1 and 12 or p_year is null or p_year not between 1971 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range';
    end if;
    -- Nothing to compose without both months, nothing to do when the comparison is stored.
    if (select count(*) from memory.monthly_summaries as m
        where m.profile_id = p_profile_id and m.month = p_month and m.year in (p_year - 1, p_year)) < 2
        or exists (select 1 from memory.yearly_comparisons as y
            where y.profile_id = p_profile_id and y.year = p_year and y.month = p_month) then
        return null;
    end if;
    -- A dead or deleted-result job is queued again: the app asking again is the retry.
    return memory_private.enqueue(
        'compare_year', jsonb_build_object('profile_id', p_profile_id, 'year', p_year, 'month', p_month),
        format('compare:%s:%s-%s', p_profile_id, p_year, p_month), v_user, null, true
    );
end
$$;

revoke all on function memory_private.enqueue_year_comparison(uuid, integer, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_year_comparison(uuid, integer, integer) to authenticated, service_role;
