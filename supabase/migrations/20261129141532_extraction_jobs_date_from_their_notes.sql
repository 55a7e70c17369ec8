-- An extract job made from a note is due and created when the turn noted it, as a summary job is.
set check_function_bodies = off;

create or replace function memory_private.queue_pending_extractions(
    p_limit integer default 1000, p_user_ids uuid[] default null::uuid[]
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_queueing boolean := memory_private.setting('job_kinds') ? 'extract';
    v_attempts integer := (memory_private.setting('job_max_attempts'))::integer;
    v_taken integer;
    v_held bigint[];
    v_notes tid[];
begin
    if not v_queueing then
        return 0;
    end if;
    for attempt in 1..2 loop
        begin
            -- The batch by the rows' addresses (matched by key, a plan could read every note to
            -- join them), chosen in two statements: one condition for both (`p_user_ids is null or
            -- ...`) had a generic plan read every note to find a few users'.
            if p_user_ids is null then
                v_notes := array(
                    select n.ctid from memory_private.pending_extractions as n
                    order by n.user_id, n.message_id
                    limit p_limit
                    for update skip locked
                );
            else
                v_notes := array(
                    select n.ctid from memory_private.pending_extractions as n
                    where n.user_id = any(p_user_ids)
                    order by n.user_id, n.message_id
                    limit p_limit
                    for update skip locked
                );
            end if;
            with taken as (
                delete from memory_private.pending_extractions as p
                where p.ctid = any(v_notes)
                returning p.message_id, p.noted_at
            ),
            waiting as (
                select m.id, m.conversation_id, coalesce(m.author_id, m.user_id) as author, t.noted_at
                from taken as t
                join memory.messages as m on m.id = t.message_id
                where not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id)
            ),
            queued as (
                -- Due and created when the turn noted it, so the queue's ages count the wait and
                -- claims serve the users whose questions wait longest first, whatever order the
                -- notes were turned into jobs in.
                insert into memory_private.jobs as j (kind, payload, dedup_key, user_id, max_attempts, run_after, created_at)
                select
                    'extract', jsonb_build_object('source_message_id', w.id, 'conversation_id', w.conversation_id),
                    'message:' || w.id, w.author, v_attempts, w.noted_at, w.noted_at
                from waiting as w
                order by w.id
                on conflict (kind, dedup_key) where dedup_key is not null do nothing
                returning j.dedup_key
            )
            select
                (select count(*) from taken)::integer,
                array(
                    select w.id from waiting as w where 'message:' || w.id not in (select q.dedup_key from queued as q)
                )
            into v_taken, v_held;
            perform memory_private.queue_extraction(h.id) from unnest(v_held) as h (id);
            return v_taken;
        exception when foreign_key_violation then
            if attempt = 2 then
                raise;
            end if;
        end;
    end loop;
end
$function$;


revoke all on function memory_private.queue_pending_extractions(integer, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_extractions(integer, uuid[]) to service_role;
