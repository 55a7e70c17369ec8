-- A finished turn notes its question in memory_private.pending_extractions instead of queueing an
-- extract job, and its jobs are decided in the answer's assign_turn (the after-insert trigger
-- enqueue_turn_jobs goes); workers that claim extractions, and a pg_cron job every minute, turn the
-- notes into jobs. job_stats counts a note as a queued extract job, and request_extraction leaves
-- noted messages to their notes.
drop trigger if exists messages_enqueue_turn_jobs on memory.messages;

drop function if exists memory_private.enqueue_turn_jobs();

create table memory_private.pending_extractions (
    message_id bigint not null,
    noted_at timestamp with time zone not null default now()
);


alter table memory_private.pending_extractions enable row level security;

create unique index pending_extractions_pkey on memory_private.pending_extractions using btree (message_id);

alter table memory_private.pending_extractions
add constraint pending_extractions_pkey primary key using index pending_extractions_pkey;

set check_function_bodies = off;

create or replace function memory_private.extraction_author(p_message_id bigint)
returns uuid
language plpgsql
stable security definer
set search_path to ''
as $function$
declare
    v_author uuid;
begin
    select coalesce(m.author_id, m.user_id) into v_author
    from memory.messages as m
    where m.id = p_message_id and m.role = 'user'
        and not exists (select 1 from memory.memory_extractions as e where e.source_message_id = m.id);
    if v_author is null or memory_private.gate_reason(v_author, p_message_id) is not null then
        return null;
    end if;
    return v_author;
end
$function$;

create or replace function memory_private.queue_pending_extractions(p_limit integer default 1000)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_queued integer;
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
    select count(memory_private.queue_extraction(t.message_id))::integer into v_queued from taken as t;
    return v_queued;
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
as $function$
declare
    v_users uuid[];
    v_anyone boolean;
    v_claimed bigint[] := '{}';
    v_id bigint;
    v_progress boolean;
begin
    if p_worker is null or p_worker !~ '[^[:space:]]' or p_limit is null or p_limit < 1 or p_limit > 100
        or p_lease <= interval '0' then
        raise exception using errcode = '22023',
            message = 'a worker name, a limit of 1..100 and a positive lease are required';
    end if;
    if 'extract' = any(p_kinds) then
        perform memory_private.queue_pending_extractions();
    end if;
    -- The users with due work of these kinds, least recently served first.
    with recursive waiting (user_id) as (
        (
            select j.user_id from memory_private.jobs as j
            where j.status = 'queued' and j.user_id is not null
            order by j.user_id limit 1
        )
        union all
        select (
            select j.user_id from memory_private.jobs as j
            where j.status = 'queued' and j.user_id > w.user_id
            order by j.user_id limit 1
        )
        from waiting as w
        where w.user_id is not null
    ),
    candidates as (
        select w.user_id from waiting as w where w.user_id is not null and p_user_ids is null
        union
        select u.user_id from unnest(p_user_ids) as u (user_id) where u.user_id is not null
    )
    select array_agg(c.user_id order by s.last_served nulls first, h.first_due, c.user_id)
    into v_users
    from candidates as c
    cross join lateral (
        select min(j.run_after) as first_due from memory_private.jobs as j
        where j.status = 'queued' and j.user_id = c.user_id and j.run_after <= now() and j.kind = any(p_kinds)
    ) as h
    cross join lateral (
        select max(j.started_at) as last_served from memory_private.jobs as j
        where j.user_id = c.user_id and j.started_at is not null
    ) as s
    where h.first_due is not null;
    v_users := coalesce(v_users, '{}');
    v_anyone := p_user_ids is null;
    -- Rounds: one job per user (and one without a user) per round, until the limit or no more.
    loop
        v_progress := false;
        for i in 1..cardinality(v_users) + 1 loop
            exit when cardinality(v_claimed) >= p_limit;
            if i <= cardinality(v_users) then
                select j.id into v_id from memory_private.jobs as j
                where j.status = 'queued' and j.user_id = v_users[i] and j.run_after <= now()
                    and j.kind = any(p_kinds) and j.id <> all(v_claimed)
                order by j.run_after, j.id
                limit 1
                for update skip locked;
            elsif v_anyone then
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
        exit when not v_progress or cardinality(v_claimed) >= p_limit;
    end loop;
    return query
    update memory_private.jobs as j
    set status = 'running', attempts = j.attempts + 1, worker = p_worker, started_at = now(),
        leased_until = now() + coalesce(p_lease, (memory_private.setting('job_lease') #>> '{}')::interval)
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
            insert into memory_private.pending_extractions (message_id) values (v_question);
        end if;
        v_interval := (memory_private.setting('summary_interval'))::integer;
        if v_next % v_interval = 0 then
            perform memory_private.enqueue(
                'summarize_conversation',
                jsonb_build_object(
                    'conversation_id', new.conversation_id, 'from_turn', v_next - v_interval + 1, 'to_turn', v_next
                ),
                'conversation:' || new.conversation_id || ':' || v_next, new.user_id
            );
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

create or replace function memory_private.enqueue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if (select auth.uid()) is not null and (select auth.uid()) is distinct from (
        select coalesce(m.author_id, m.user_id) from memory.messages as m where m.id = p_message_id
    ) or exists (select 1 from memory_private.pending_extractions as p where p.message_id = p_message_id) then
        return null;
    end if;
    return memory_private.queue_extraction(p_message_id);
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
from (
    select
        q.kind,
        q.status,
        q.run_after,
        q.created_at,
        q.finished_at,
        q.failed_at,
        q.usage
    from memory_private.jobs as q
    union all
    select
        'extract' as kind,
        'queued' as status,
        p.noted_at as run_after,
        p.noted_at as created_at,
        null::timestamptz as finished_at,
        null::timestamptz as failed_at,
        null::jsonb as usage
    from memory_private.pending_extractions as p
) as j
group by j.kind;


create or replace function memory_private.queue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_author uuid := memory_private.extraction_author(p_message_id);
begin
    if v_author is null then
        return null;
    end if;
    return memory_private.enqueue(
        'extract',
        jsonb_build_object(
            'source_message_id', p_message_id,
            'conversation_id', (select m.conversation_id from memory.messages as m where m.id = p_message_id)
        ),
        'message:' || p_message_id, v_author, null, true
    );
end
$function$;

grant select on table memory_private.pending_extractions to service_role;


revoke all on function memory.claim_jobs(text[], text, integer, interval, uuid[])
from public, anon, authenticated, service_role;
grant execute on function memory.claim_jobs(text[], text, integer, interval, uuid[]) to service_role;
revoke all on function memory_private.assign_turn() from public, anon, authenticated, service_role;
revoke all on function memory_private.enqueue_extraction(bigint) from public, anon, authenticated, service_role;
grant execute on function memory_private.enqueue_extraction(bigint) to authenticated, service_role;
revoke all on function memory_private.extraction_author(bigint) from public, anon, authenticated, service_role;
revoke all on function memory_private.queue_extraction(bigint) from public, anon, authenticated, service_role;
revoke all on function memory_private.queue_pending_extractions(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_pending_extractions(integer) to service_role;
comment on table memory_private.pending_extractions is
'User messages whose turn opened the memory gate, waiting to become extract jobs.';

insert into memory_private.schedules (name, schedule, command) values
('supamem-queue-extractions', '* * * * *', 'select memory_private.queue_pending_extractions()');
select memory_private.schedule_jobs();
