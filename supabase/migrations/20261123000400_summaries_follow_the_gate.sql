-- Weekly and monthly summaries are long-term memory, so they obey the memory gate. They are built
-- from the conversation summaries tagged with a profile; a conversation summary is now tagged only
-- when its conversation may feed long-term memory (seed 004's key rule at conversation level):
-- the conversation's profile is its owner's primary profile, "Remember in this chat" is on (off
-- by default in swiss mode), and the owner has not paused memory. Otherwise the summary is still
-- kept for the conversation's own context, untagged, and no weekly or monthly summary sees it.

-- Why: the conversation-level half of the gate (memory_private.gate_reason asks it per message).
create function memory_private.long_term_profile(p_conversation_id uuid)
returns uuid
language sql
stable
set search_path = ''
as $$
    select c.profile_id
    from memory.conversations as c
    inner join memory.profiles as p on c.profile_id = p.id and c.user_id = p.user_id and p.is_primary
    inner join memory.users as u on c.user_id = u.id and not u.memory_paused
    where c.id = p_conversation_id and c.remember
$$;
grant execute on function memory_private.long_term_profile(uuid) to service_role;

create or replace function memory.finish_conversation_summary(
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
begin
    select c.* into v_conversation from memory.conversations as c where c.id = (v_job.payload ->> 'conversation_id')::uuid;
    if found then
        -- Dated by its last turn, not by when the job ran: a late or retried job must not move
        -- the summary into another week.
        insert into memory.conversation_summaries (
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
        returning id into v_id;
    end if;
    perform memory.complete_job(p_job_id, p_worker, jsonb_build_object('summary_id', v_id), p_usage);
    return v_id;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
