-- Why: seed 004's turn summary, written under the job's lease and completed in the same
-- transaction; regenerating replaces it. Dated by its last turn, so a late job never moves it into
-- another week, and tagged with a profile only when the conversation passes the memory gate. A
-- summary whose week is summarised already (a job late past the week's end, or one regenerated)
-- queues the week again, and a week job running now, which may have read its input already, is
-- told to run again when it is done (memory_private.run_again), so the week holds it.
create function memory.finish_conversation_summary(
    p_job_id bigint, p_worker text, p_summary text, p_usage jsonb default null
)
returns uuid
language plpgsql
set search_path = ''
as $$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_conversation memory.conversations;
    v_id uuid;
    v_profile uuid;
    v_week date;
begin
    select c.* into v_conversation from memory.conversations as c where c.id = (v_job.payload ->> 'conversation_id')::uuid;
    if found then
        -- Dated by its last turn, not by when the job ran: a late or retried job must not move
        -- the summary into another week.
        insert into memory.conversation_summaries as s (
            conversation_id, user_id, profile_id, from_turn, to_turn, summary, created_at
        )
        values (
            v_conversation.id, v_conversation.user_id, memory_private.long_term_profile(v_conversation.id),
            (v_job.payload ->> 'from_turn')::integer, (v_job.payload ->> 'to_turn')::integer, p_summary,
            coalesce((
                select max(m.created_at) from memory.messages as m
                where m.conversation_id = v_conversation.id and m.turn_number <= (v_job.payload ->> 'to_turn')::integer
                    and m.turn_number >= (v_job.payload ->> 'from_turn')::integer
            ), now())
        )
        on conflict (conversation_id, to_turn) do update set summary = excluded.summary, profile_id = excluded.profile_id
        returning s.id, s.profile_id, memory_private.local_week_start(
            s.created_at, (select p.timezone from memory.profiles as p where p.id = s.profile_id)
        ) into v_id, v_profile, v_week;
        if exists (
            select 1 from memory.weekly_summaries as w where w.profile_id = v_profile and w.week_start_date = v_week
        ) then
            perform memory_private.enqueue(
                'summarize_week', jsonb_build_object('profile_id', v_profile, 'week_start', v_week),
                format('week:%s:%s', v_profile, v_week), v_conversation.user_id, null, true
            );
        end if;
        perform memory_private.run_again('summarize_week', format('week:%s:%s', v_profile, v_week));
    end if;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('summary_id', v_id), p_usage);
    return v_id;
end
$$;

revoke all on function memory.finish_conversation_summary(bigint, text, text, jsonb)
from public, anon, authenticated, service_role;
grant execute on function memory.finish_conversation_summary(bigint, text, text, jsonb) to service_role;
