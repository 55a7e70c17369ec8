-- Why: pg_cron's minutely pass over the turns' notes of one kind that no worker has taken
-- ('extract': the questions, memory_private.queue_pending_extractions; 'summarize_conversation':
-- the summaries, memory_private.queue_pending_summaries): the notes there when it starts, in
-- batches of 1,000 each committed on its own, so a backlog (an app running no workers for a while)
-- never becomes one long transaction and never outgrows the pass. A procedure that commits cannot
-- carry a `set search_path` clause, so every name in it is schema-qualified. With the kind left out
-- of job_kinds the notes wait, uncounted.
create procedure memory_private.run_note_queue(p_kind text)
language plpgsql
as $$
declare
    v_batches integer;
begin
    if p_kind is null or p_kind not in ('extract', 'summarize_conversation') then
        raise exception using errcode = '22023', message = format('no notes of kind %L', p_kind),
            hint = 'The turns note extract and summarize_conversation work.';
    end if;
    if not memory_private.setting('job_kinds') ? p_kind then
        return;
    end if;
    v_batches := ceil((
        case p_kind
            when 'extract' then (select count(*) from memory_private.pending_extractions)
            else (select count(*) from memory_private.pending_summaries)
        end
    ) / 1000.0)::integer;
    for i in 1..v_batches loop
        exit when (
            case p_kind
                when 'extract' then memory_private.queue_pending_extractions(1000)
                else memory_private.queue_pending_summaries(1000)
            end
        ) = 0;
        commit;
    end loop;
end
$$;

revoke all on procedure memory_private.run_note_queue(text) from public, anon, authenticated, service_role;
grant execute on procedure memory_private.run_note_queue(text) to service_role;
