-- The embed scan also queues again, an hour after it died, the dead embed job of a user whose
-- memories wait for a vector: no message note names them, so such a user waited for their next message.
set check_function_bodies = off;

create or replace function memory_private.queue_embeddings()
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
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
$function$;


revoke all on function memory_private.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings() to service_role;
