-- Why: a week or month job reads its input when it starts and writes from it minutes later; a
-- conversation summary (or a week) written between would be left out for good. The writer tells
-- the running job to run again (a flag in its payload), and the job's finish queues it again once
-- it is done. A queued job reads what is there when it starts, and a finished one is queued again
-- by the writer itself.
create function memory_private.run_again(p_kind text, p_dedup_key text)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
    update memory_private.jobs as j
    set payload = j.payload || '{"again": true}'
    where j.kind = p_kind and j.dedup_key = p_dedup_key and j.status = 'running';
end
$$;

revoke all on function memory_private.run_again(text, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.run_again(text, text) to service_role;

-- Called by a finish after its job is done: a job told to run again is queued again, without the flag.
create function memory_private.ran_again(p_job memory_private.jobs)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
    if (p_job.payload ->> 'again')::boolean then
        perform memory_private.enqueue(p_job.kind, p_job.payload - 'again', p_job.dedup_key, p_job.user_id, null, true);
    end if;
end
$$;

revoke all on function memory_private.ran_again(memory_private.jobs) from public, anon, authenticated, service_role;
grant execute on function memory_private.ran_again(memory_private.jobs) to service_role;
