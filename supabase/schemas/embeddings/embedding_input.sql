-- What an embed job sends to the embeddings server: a batch of the user's rows waiting for a vector.
create function memory.embedding_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
begin
    if v_job.kind <> 'embed' then
        raise exception using errcode = '22023', message = format('job %s is a %s job, not embed', p_job_id, v_job.kind);
    end if;
    -- Notes of messages deleted before they got a vector are dropped, so a user left with only
    -- those is not queued again.
    delete from memory_private.pending_embeddings as n
    where n.user_id = v_job.user_id and not exists (select 1 from memory.messages as m where m.id = n.message_id);
    return jsonb_build_object(
        'kind', v_job.kind,
        'model', memory_private.setting('embedding_model') ->> 0,
        'dimensions', (memory_private.setting('embedding_dimensions'))::integer,
        'items', coalesce((
            select jsonb_agg(jsonb_build_object('kind', u.kind, 'id', u.id, 'text', u.content, 'version', u.version))
            from memory_private.unembedded(v_job.user_id, (memory_private.setting('embedding_batch'))::integer) as u
        ), '[]')
    );
end
$$;

revoke all on function memory.embedding_input(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory.embedding_input(bigint, text) to service_role;
