-- pg_cron's pass over the turns' extraction notes drains every note there when it starts, in
-- committed batches of 1,000 (memory_private.run_extraction_queue), where it took at most 1,000 a
-- minute; queue_pending_extractions returns how many notes it took.
set check_function_bodies = off;

create or replace procedure memory_private.run_extraction_queue()
language plpgsql
as $procedure$
declare
    v_batches integer := ceil((select count(*) from memory_private.pending_extractions) / 1000.0)::integer;
begin
    for i in 1..v_batches loop
        exit when memory_private.queue_pending_extractions(1000) = 0;
        commit;
    end loop;
end
$procedure$;

create or replace function memory_private.queue_pending_extractions(p_limit integer default 1000)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_taken bigint[];
begin
    with taken as (
        delete from memory_private.pending_extractions as p
        where p.message_id in (
            select n.message_id from memory_private.pending_extractions as n
            order by n.message_id
            limit p_limit
            for update skip locked
        )
        returning p.message_id
    )
    select coalesce(array_agg(t.message_id order by t.message_id), '{}') into v_taken from taken as t;
    perform memory_private.queue_extraction(t.message_id) from unnest(v_taken) as t (message_id);
    return cardinality(v_taken);
end
$function$;


revoke all on function memory_private.queue_pending_extractions(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_extractions(integer) to service_role;
revoke all on procedure memory_private.run_extraction_queue() from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_extraction_queue() to service_role;

update memory_private.schedules set command = 'call memory_private.run_extraction_queue()'
where name = 'supamem-queue-extractions';
select memory_private.schedule_jobs();
