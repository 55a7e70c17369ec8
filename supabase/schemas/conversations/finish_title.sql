-- Why: seed 002's open question: a title from the first turn, never over one the user set.
create function memory.finish_title(p_job_id bigint, p_worker text, p_title text, p_usage jsonb default null)
returns text
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_title text := left(btrim(p_title), 120);
begin
    if v_title is null or v_title !~ '[^[:space:]]' then
        raise exception using errcode = '22023', message = 'title must not be empty';
    end if;
    update memory.conversations as c set title = v_title
    where c.id = (v_job.payload ->> 'conversation_id')::uuid and c.title is null;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('title', v_title), p_usage);
    return v_title;
end
$$;

revoke all on function memory.finish_title(bigint, text, text, jsonb) from public, anon, authenticated, service_role;
grant execute on function memory.finish_title(bigint, text, text, jsonb) to service_role;
