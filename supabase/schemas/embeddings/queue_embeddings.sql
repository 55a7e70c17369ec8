-- Queue the embed jobs of the users with noted messages and no embed job queued or running
-- (after noting the next batch of a new model's messages); returns how many. A job that died (its
-- retries spent: the embeddings server down, say) is queued again an hour after it died, not at
-- every scan; so is one whose user has only memories left without a vector, which no note names
-- (a memory's write queued the job). The users are found by skipping through the notes' primary
-- key from one user to the next, so a scan costs the users waiting, not their notes, and the dead
-- jobs, few, through their own index.
create function memory_private.queue_embeddings()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_users integer;
begin
    if not memory_private.setting('job_kinds') ? 'embed' then
        return 0;
    end if;
    -- The messages of a new model not noted yet, a batch at a time.
    perform memory_private.note_for_new_model();
    with recursive noted as (
        (select n.user_id from memory_private.pending_embeddings as n order by n.user_id limit 1)
        union all
        select (
            select n.user_id from memory_private.pending_embeddings as n
            where n.user_id > d.user_id
            order by n.user_id
            limit 1
        )
        from noted as d
        where d.user_id is not null
    )
    select count(memory_private.queue_embed(d.user_id))::integer
    into v_users
    from noted as d
    where d.user_id is not null and not exists (
            select 1 from memory_private.jobs as j
            where j.kind = 'embed' and j.dedup_key = 'embed:' || d.user_id
                and (j.status in ('queued', 'running') or j.status = 'dead' and j.failed_at > now() - interval '1 hour')
        );
    return v_users + (
        select count(memory_private.queue_embed(j.user_id))::integer
        from memory_private.jobs as j
        where j.kind = 'embed' and j.status = 'dead' and j.failed_at <= now() - interval '1 hour'
            and exists (
                select 1 from memory.memories as mm
                where mm.user_id = j.user_id and mm.deleted_at is null and not exists (
                    select 1 from memory_private.memory_embeddings as e
                    where e.memory_id = mm.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
                )
            )
    );
end
$$;

revoke all on function memory_private.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings() to service_role;

create function memory.queue_embeddings()
returns integer
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.queue_embeddings();
end
$$;

revoke all on function memory.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory.queue_embeddings() to service_role;
