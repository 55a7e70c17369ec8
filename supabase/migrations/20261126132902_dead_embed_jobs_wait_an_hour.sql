-- The embed scan queues a dead embed job again an hour after it died, not at every scan: with the
-- embeddings server down, a user's job would otherwise spend its retries again every minute.
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
    select count(memory_private.enqueue('embed', '{}', 'embed:' || d.user_id, d.user_id, null, true))::integer
    into v_users
    from noted as d
    where d.user_id is not null and not exists (
            select 1 from memory_private.jobs as j
            where j.kind = 'embed' and j.dedup_key = 'embed:' || d.user_id
                and (j.status in ('queued', 'running') or j.status = 'dead' and j.failed_at > now() - interval '1 hour')
        );
    return v_users;
end
$function$;


revoke all on function memory_private.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings() to service_role;
