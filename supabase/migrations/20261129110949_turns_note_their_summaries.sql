-- A turn notes its conversation's summary (memory_private.pending_summaries) instead of queueing a
-- job; claims for summaries and a minutely pg_cron job turn the notes into jobs.
create table memory_private.pending_summaries (
    conversation_id uuid not null,
    to_turn integer not null,
    turns integer not null,
    noted_at timestamp with time zone not null default now()
);

alter table memory_private.pending_summaries enable row level security;

create unique index pending_summaries_pkey on memory_private.pending_summaries using btree (conversation_id, to_turn);

alter table memory_private.pending_summaries
add constraint pending_summaries_pkey primary key using index pending_summaries_pkey;

alter table memory_private.pending_summaries add constraint pending_summaries_check check (
    ((turns > 0) and (turns <= to_turn))
) not valid;

alter table memory_private.pending_summaries validate constraint "pending_summaries_check";

alter table memory_private.pending_summaries add constraint pending_summaries_to_turn_check check (
    (to_turn > 0)
) not valid;

alter table memory_private.pending_summaries validate constraint "pending_summaries_to_turn_check";

set check_function_bodies = off;

create or replace function memory_private.queue_pending_summaries(p_limit integer default 1000)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_taken integer;
begin
    if not memory_private.setting('job_kinds') ? 'summarize_conversation' then
        return 0;
    end if;
    with taken as (
        delete from memory_private.pending_summaries as p
        where (p.conversation_id, p.to_turn) in (
            select n.conversation_id, n.to_turn from memory_private.pending_summaries as n
            order by n.noted_at, n.conversation_id, n.to_turn
            limit p_limit
            for update skip locked
        )
        returning p.conversation_id, p.to_turn, p.turns, p.noted_at
    ),
    queued as (
        insert into memory_private.jobs as j (kind, payload, dedup_key, user_id, run_after, max_attempts)
        select
            'summarize_conversation',
            jsonb_build_object(
                'conversation_id', t.conversation_id, 'from_turn', t.to_turn - t.turns + 1, 'to_turn', t.to_turn
            ),
            'conversation:' || t.conversation_id || ':' || t.to_turn, c.user_id, t.noted_at,
            (memory_private.setting('job_max_attempts'))::integer
        from taken as t
        join memory.conversations as c on c.id = t.conversation_id
        order by t.noted_at, t.conversation_id, t.to_turn
        on conflict (kind, dedup_key) where dedup_key is not null do nothing
    )
    select count(*)::integer into v_taken from taken;
    return v_taken;
end
$function$;

create or replace function memory.claim_jobs(
    p_kinds text[],
    p_worker text,
    p_limit integer default 1,
    p_lease interval default null::interval,
    p_user_ids uuid[] default null::uuid[]
)
returns table (
    id bigint, kind text, payload jsonb, user_id uuid, attempts integer, leased_until timestamp with time zone
)
language plpgsql
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_users uuid[];
    -- Round one's users: those who had a job, in order, and those who had none due.
    v_served uuid[] := '{}';
    v_idle uuid[] := '{}';
    v_batch integer;
    v_lease interval := coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval);
    v_more boolean := false;
    v_anyone boolean := p_user_ids is null;
    v_claimed bigint[] := '{}';
    v_id bigint;
    v_progress boolean := false;
    v_round integer := 1;
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or not v_lease between interval '1 microsecond' and interval '1 day' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a lease longer than 0 and at most a day are required';
    end if;
    v_batch := p_limit + 8;
    if 'extract' = any(p_kinds) then
        perform memory_private.queue_pending_extractions();
    end if;
    if 'summarize_conversation' = any(p_kinds) then
        perform memory_private.queue_pending_summaries();
    end if;
    -- Rounds: one job per user with due work (and one without a user) per round, until the limit
    -- or no more. Round one reads the users least recently served first, then by their oldest due
    -- job, a batch at a time: the next batch (four times larger) only when the users read fell
    -- short of the limit and more are waiting. Later rounds go through the users round one served.
    loop
        if v_round = 1 then
            select o.users, o.more into v_users, v_more
            from memory_private.claim_order(p_kinds, v_batch, p_user_ids) as o;
        else
            v_users := v_served;
        end if;
        for i in 1..cardinality(v_users) + 1 loop
            exit when cardinality(v_claimed) >= p_limit;
            if i <= cardinality(v_users) then
                -- A batch read again holds the users read before it.
                continue when v_round = 1 and (v_users[i] = any(v_served) or v_users[i] = any(v_idle));
                select j.id into v_id from memory_private.jobs as j
                where j.status = 'queued' and j.user_id = v_users[i] and j.run_after <= now()
                    and j.kind = any(p_kinds) and j.id <> all(v_claimed)
                order by j.run_after, j.id
                limit 1
                for update skip locked;
                if v_round = 1 and v_id is null then
                    v_idle := v_idle || v_users[i];
                elsif v_round = 1 then
                    v_served := v_served || v_users[i];
                end if;
            elsif v_anyone and not v_more then
                select j.id into v_id from memory_private.jobs as j
                where j.status = 'queued' and j.user_id is null and j.run_after <= now()
                    and j.kind = any(p_kinds) and j.id <> all(v_claimed)
                order by j.run_after, j.id
                limit 1
                for update skip locked;
            else
                v_id := null;
            end if;
            if v_id is not null then
                v_claimed := v_claimed || v_id;
                v_progress := true;
            end if;
        end loop;
        exit when cardinality(v_claimed) >= p_limit;
        if v_more then
            v_batch := v_batch * 4;
        else
            exit when not v_progress;
            v_round := v_round + 1;
            v_progress := false;
        end if;
    end loop;
    -- A user read as waiting with nothing due has a row behind their jobs: work it out again.
    if cardinality(v_idle) > 0 then
        perform memory_private.refresh_job_waiters(v_idle);
    end if;
    return query
    update memory_private.jobs as j
    set status = 'running', attempts = j.attempts + 1, worker = p_worker, started_at = now(),
        leased_until = now() + v_lease
    where j.id = any(v_claimed)
    returning j.id, j.kind, j.payload, j.user_id, j.attempts, j.leased_until;
end
$function$;

create or replace function memory_private.assign_turn()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_conversation memory.conversations;
    v_next integer;
    v_join boolean;
    v_interval integer;
    v_question bigint;
begin
    -- memory.import_messages numbers, locks and trims its batch itself. The setting is unset (null)
    -- on a connection that never imported: coalesced, so only an import's rows ask importing().
    if coalesce(current_setting('memory.importing', true), '') = 'on' and memory_private.importing() then
        return new;
    end if;
    select c.* into v_conversation from memory.conversations as c where c.id = new.conversation_id for update;
    if not found or v_conversation.expires_at <= now() then
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if (select auth.uid()) is not null and v_conversation.user_id <> (select auth.uid()) and not exists (
        select 1 from memory.participants as p
        where p.conversation_id = new.conversation_id and p.user_id = (select auth.uid())
    ) then
        -- A caller who cannot read the conversation learns nothing, not even that it exists.
        if v_conversation.tenant_id = any(memory_private.administered_tenants()) then
            raise exception using errcode = '42501', message = 'only the owner and participants write to a conversation';
        end if;
        raise exception using errcode = 'P0002', message = 'conversation not found',
            detail = format('conversation %s', new.conversation_id);
    end if;
    if v_conversation.archived then
        raise exception using errcode = '55000', message = 'conversation is archived',
            hint = 'Unarchive it before adding messages.';
    end if;
    -- An answer joins the open turn; a user message, or an answer with no open turn, opens one.
    v_join := new.role = 'assistant' and v_conversation.last_turn > 0 and not exists (
        select 1 from memory.messages as m
        where m.conversation_id = new.conversation_id
            and m.turn_number = v_conversation.last_turn
            and m.role = 'assistant'
    );
    v_next := case when v_join then v_conversation.last_turn else v_conversation.last_turn + 1 end;
    if new.turn_number < 1 then
        raise exception using errcode = '23514', message = format('turn number %s must be positive', new.turn_number);
    end if;
    if new.turn_number is not null and new.turn_number <> v_next then
        if new.turn_number <= v_conversation.last_turn then
            raise exception using errcode = '23505', message = format('turn %s already exists', new.turn_number),
                detail = format('the next turn number for this %s message is %s', new.role, v_next);
        end if;
        raise exception using errcode = '23514', message = format('turn %s would leave a gap', new.turn_number),
            detail = format('the next turn number for this %s message is %s', new.role, v_next);
    end if;
    new.turn_number := v_next;
    new.user_id := v_conversation.user_id;
    new.tenant_id := v_conversation.tenant_id;
    new.created_at := now();
    new.expires_at := now() + v_conversation.ttl;
    -- The message waits for its vector; the minutely scan queues its user's embed job.
    insert into memory_private.pending_embeddings (user_id, message_id) values (new.user_id, new.id);
    -- Only a new turn moves the conversation (an answer joining its turn needs no second update),
    -- and pushes exactly one turn out of the window: older ones left it on earlier turns.
    if not v_join then
        update memory.conversations as c
        set last_turn = v_next, updated_at = now(), expires_at = now() + c.ttl
        where c.id = new.conversation_id;
        if v_conversation.window_turns is not null then
            delete from memory.messages as m
            where m.conversation_id = new.conversation_id
                and m.turn_number = v_next - v_conversation.window_turns;
        end if;
    end if;
    if new.role = 'assistant' then
        select m.id into v_question from memory.messages as m
        where m.conversation_id = new.conversation_id and m.turn_number = v_next and m.role = 'user';
        if v_question is not null and memory_private.extraction_author(v_question) is not null then
            -- A regenerated answer (the first deleted, a second added) finds its question noted already.
            insert into memory_private.pending_extractions (message_id) values (v_question) on conflict do nothing;
        end if;
        v_interval := (memory_private.setting('summary_interval'))::integer;
        if v_next % v_interval = 0 and memory_private.setting('job_kinds') ? 'summarize_conversation' then
            insert into memory_private.pending_summaries (conversation_id, to_turn, turns)
            values (new.conversation_id, v_next, v_interval)
            on conflict do nothing;
        end if;
        if v_next = 1 and v_conversation.title is null then
            perform memory_private.enqueue(
                'title', jsonb_build_object('conversation_id', new.conversation_id),
                'title:' || new.conversation_id, new.user_id
            );
        end if;
    end if;
    return new;
end
$function$;

create or replace view memory_private.job_stats with (security_invoker = true) as select
    j.kind,
    count(*) filter (where (j.status = 'queued'::text)) as queued,
    count(*) filter (where (j.status = 'running'::text)) as running,
    count(*) filter (where (j.status = 'dead'::text)) as dead,
    count(*) filter (where ((j.status = 'done'::text) and (j.finished_at > (now() - '01:00:00'::interval))))
        as done_last_hour,
    (now() - min(j.created_at) filter (where (j.status = 'queued'::text))) as oldest_queued_age,
    count(*) filter (where (j.failed_at > (now() - '01:00:00'::interval))) as retries_last_hour,
    percentile_cont((0.5)::double precision) within group (order by (j.finished_at - j.created_at)) filter (
        where ((j.status = 'done'::text) and (j.finished_at > (now() - '01:00:00'::interval)))
    ) as p50_latency,
    percentile_cont((0.95)::double precision) within group (order by (j.finished_at - j.created_at)) filter (
        where ((j.status = 'done'::text) and (j.finished_at > (now() - '01:00:00'::interval)))
    ) as p95_latency,
    (
        coalesce(
            sum(((j.usage ->> 'total_tokens'::text))::bigint) filter (
                where (j.finished_at > (now() - '01:00:00'::interval))
            ),
            (0)::numeric
        )
    )::bigint as tokens_last_hour,
    count(*) filter (where ((j.status = 'queued'::text) and (j.run_after > now()))) as waiting
from (select
    q.kind,
    q.status,
    q.run_after,
    q.created_at,
    q.finished_at,
    q.failed_at,
    q.usage
from memory_private.jobs as q
where
    (
        (q.status = 'queued'::text)
        or (q.status = 'running'::text)
        or (q.status = 'dead'::text)
        or ((q.status = any(array['done'::text, 'dead'::text])) and (q.finished_at > (now() - '01:00:00'::interval)))
        or (q.failed_at > (now() - '01:00:00'::interval))
    )
union all
select
    'extract'::text as kind,
    'queued'::text as status,
    p.noted_at as run_after,
    p.noted_at as created_at,
    null::timestamp with time zone as finished_at,
    null::timestamp with time zone as failed_at,
    null::jsonb as usage
from memory_private.pending_extractions as p
union all
select
    'summarize_conversation'::text as kind,
    'queued'::text as status,
    p.noted_at as run_after,
    p.noted_at as created_at,
    null::timestamp with time zone as finished_at,
    null::timestamp with time zone as failed_at,
    null::jsonb as usage
from memory_private.pending_summaries as p) as j
group by j.kind;

grant select on table memory_private.pending_summaries to service_role;

revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
revoke all on function memory_private.assign_turn() from public, anon, authenticated, service_role;
revoke all on function memory_private.queue_pending_summaries(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_summaries(integer) to service_role;
comment on table memory_private.pending_summaries is
'Conversation summaries due (turns to_turn - turns + 1 to to_turn), waiting to become summarize_conversation jobs.';

insert into memory_private.schedules (name, schedule, command) values
('supamem-queue-summaries', '* * * * *', 'select memory_private.queue_pending_summaries(10000)');
select memory_private.schedule_jobs();
