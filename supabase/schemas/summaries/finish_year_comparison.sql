-- Why: seed 004's compare-yearly-patterns result: the model's comparison of a month with the same
-- month a year earlier, written under the job's lease and completed in the same transaction;
-- regenerating replaces it. A job told to run again (a month of it written while it ran) is queued
-- again once it is done.
create function memory.finish_year_comparison(
    p_job_id bigint, p_worker text, p_comparison text, p_usage jsonb default null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_profile memory.profiles;
    v_id uuid;
begin
    select p.* into v_profile from memory.profiles as p where p.id = (v_job.payload ->> 'profile_id')::uuid;
    insert into memory.yearly_comparisons (user_id, profile_id, year, month, comparison)
    values (
        v_profile.user_id, v_profile.id, (v_job.payload ->> 'year')::integer, (v_job.payload ->> 'month')::integer,
        p_comparison
    )
    on conflict (user_id, profile_id, year, month) do update set comparison = excluded.comparison, created_at = now()
    returning id into v_id;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('yearly_comparison_id', v_id), p_usage);
    perform memory_private.ran_again(v_job);
    return v_id;
end
$$;

revoke all on function memory.finish_year_comparison(bigint, text, text, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_year_comparison(bigint, text, text, jsonb) to service_role;
