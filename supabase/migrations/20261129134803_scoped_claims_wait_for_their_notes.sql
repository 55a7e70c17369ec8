-- A claim for some users waits for their notes another pass holds (a moment, while it makes their
-- jobs) instead of skipping them, so a --once worker finds the jobs that pass made.
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
                    -- Waited for: another pass holds them only while it makes their jobs,
                    -- which this claim then finds (skipped, a --once worker found nothing).
                    for update
                );
            end if;
            with taken as (
                delete from memory_private.pending_extractions as p
                where p.ctid = any(v_notes)
                returning p.message_id
            ),
            waiting as (
                select m.id, m.conversation_id, coalesce(m.author_id, m.user_id) as author
                from taken as t
                join memory.messages as m on m.id = t.message_id
                where not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id)
            ),
            queued as (
                insert into memory_private.jobs as j (kind, payload, dedup_key, user_id, max_attempts)
                select
                    'extract', jsonb_build_object('source_message_id', w.id, 'conversation_id', w.conversation_id),
                    'message:' || w.id, w.author, v_attempts
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

create or replace function memory_private.queue_pending_summaries(
    p_limit integer default 1000, p_user_ids uuid[] default null::uuid[]
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_taken integer;
    v_notes tid[];
begin
    if not memory_private.setting('job_kinds') ? 'summarize_conversation' then
        return 0;
    end if;
    for attempt in 1..2 loop
        begin
            -- The batch by the rows' addresses (matched by key, a plan could read every note to
            -- join them), chosen in two statements: one condition for both (`p_user_ids is null or
            -- ...`) had a generic plan read every note to find a few users'.
            if p_user_ids is null then
                v_notes := array(
                    select n.ctid from memory_private.pending_summaries as n
                    order by n.conversation_id, n.to_turn
                    limit p_limit
                    for update skip locked
                );
            else
                v_notes := array(
                    select n.ctid from memory_private.pending_summaries as n
                    where n.conversation_id in (
                        select c.id from memory.conversations as c where c.user_id = any(p_user_ids)
                    )
                    order by n.conversation_id, n.to_turn
                    limit p_limit
                    -- Waited for: another pass holds them only while it makes their jobs,
                    -- which this claim then finds (skipped, a --once worker found nothing).
                    for update
                );
            end if;
            with taken as (
                delete from memory_private.pending_summaries as p
                where p.ctid = any(v_notes)
                returning p.conversation_id, p.to_turn, p.turns, p.noted_at
            ),
            queued as (
                insert into memory_private.jobs as j (
                    kind, payload, dedup_key, user_id, run_after, created_at, max_attempts
                )
                select
                    'summarize_conversation',
                    jsonb_build_object(
                        'conversation_id', t.conversation_id, 'from_turn', t.to_turn - t.turns + 1, 'to_turn', t.to_turn
                    ),
                    'conversation:' || t.conversation_id || ':' || t.to_turn, c.user_id, t.noted_at, t.noted_at,
                    (memory_private.setting('job_max_attempts'))::integer
                from taken as t
                join memory.conversations as c on c.id = t.conversation_id
                order by c.user_id, t.conversation_id, t.to_turn
                on conflict (kind, dedup_key) where dedup_key is not null do nothing
            )
            select count(*)::integer into v_taken from taken;
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
revoke all on function memory_private.queue_pending_summaries(integer, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_summaries(integer, uuid[]) to service_role;
