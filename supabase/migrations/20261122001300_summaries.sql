-- Hierarchical summaries (seed 004): every N turns of a conversation, weekly per user and profile
-- (from the turn summaries, in the profile's time zone), monthly (from the weekly ones), and a
-- year-over-year comparison composed from stored summaries. Titles (seed 002's open question:
-- generated after the first turn). The LLM writes them through the finish_* RPCs below.

insert into memory_private.settings (key, value, description) values
('summary_interval', '4', 'A conversation summary every N turns (seed 004''s SUMMARY_INTERVAL).'),
('summary_lookback', '"8 weeks"', 'How far back the weekly and monthly schedulers look for missing summaries.');

create table memory.conversation_summaries (
    id uuid primary key default gen_random_uuid(),
    conversation_id uuid not null references memory.conversations (id) on delete cascade,
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid references memory.profiles (id) on delete set null,
    from_turn integer not null check (from_turn > 0),
    to_turn integer not null check (to_turn >= from_turn),
    summary text not null check (summary ~ '[^[:space:]]' and length(summary) <= 4000),
    created_at timestamptz not null default now(),
    unique (conversation_id, to_turn)
);
create index conversation_summaries_user_id_idx on memory.conversation_summaries (user_id);
create index conversation_summaries_tenant_id_idx on memory.conversation_summaries (tenant_id);
create index conversation_summaries_profile_recent_idx on memory.conversation_summaries (profile_id, created_at);
create index conversation_summaries_created_at_idx on memory.conversation_summaries (created_at);
comment on table memory.conversation_summaries is 'Every N turns: a 100-200 token summary of those turns.';

create table memory.weekly_summaries (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid not null,
    iso_year smallint not null,
    week_number smallint not null check (week_number between 1 and 53),
    week_start_date date not null,
    week_end_date date not null check (week_end_date = week_start_date + 6),
    emotional_summary text not null check (emotional_summary ~ '[^[:space:]]'),
    key_themes text[] not null default '{}',
    dominant_patterns text[] not null default '{}',
    conversation_count integer not null default 0 check (conversation_count >= 0),
    created_at timestamptz not null default now(),
    unique (user_id, profile_id, iso_year, week_number),
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade
);
create index weekly_summaries_tenant_id_idx on memory.weekly_summaries (tenant_id);
create index weekly_summaries_profile_id_idx on memory.weekly_summaries (profile_id, week_start_date);
comment on table memory.weekly_summaries is 'A week of a profile''s conversations, in the profile''s time zone.';

create table memory.monthly_summaries (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid not null,
    year smallint not null,
    month smallint not null check (month between 1 and 12),
    emotional_summary text not null check (emotional_summary ~ '[^[:space:]]'),
    cognitive_summary text,
    key_themes text[] not null default '{}',
    context jsonb not null default '{}' check (jsonb_typeof(context) = 'object'),
    conversation_count integer not null default 0 check (conversation_count >= 0),
    weekly_summaries_used integer not null default 0 check (weekly_summaries_used >= 0),
    created_at timestamptz not null default now(),
    unique (user_id, profile_id, year, month),
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade
);
create index monthly_summaries_tenant_id_idx on memory.monthly_summaries (tenant_id);
create index monthly_summaries_profile_id_idx on memory.monthly_summaries (profile_id, year, month);
comment on table memory.monthly_summaries is 'A month of a profile, composed from its weekly summaries.';

create table memory.yearly_comparisons (
    id uuid primary key default gen_random_uuid(),
    user_id uuid not null references memory.users (id) on delete cascade,
    tenant_id uuid references memory.tenants (id) on delete cascade,
    profile_id uuid not null,
    year smallint not null,
    month smallint not null check (month between 1 and 12),
    comparison text not null check (comparison ~ '[^[:space:]]'),
    created_at timestamptz not null default now(),
    unique (user_id, profile_id, year, month),
    foreign key (profile_id, user_id) references memory.profiles (id, user_id) on delete cascade
);
create index yearly_comparisons_tenant_id_idx on memory.yearly_comparisons (tenant_id);
create index yearly_comparisons_profile_id_idx on memory.yearly_comparisons (profile_id);
comment on table memory.yearly_comparisons is 'A month compared with the same month a year earlier.';

create trigger conversation_summaries_inherit_tenant
before insert or update of user_id, tenant_id on memory.conversation_summaries
for each row execute function memory_private.inherit_tenant();
create trigger weekly_summaries_inherit_tenant
before insert or update of user_id, tenant_id on memory.weekly_summaries
for each row execute function memory_private.inherit_tenant();
create trigger monthly_summaries_inherit_tenant
before insert or update of user_id, tenant_id on memory.monthly_summaries
for each row execute function memory_private.inherit_tenant();
create trigger yearly_comparisons_inherit_tenant
before insert or update of user_id, tenant_id on memory.yearly_comparisons
for each row execute function memory_private.inherit_tenant();

alter table memory.conversation_summaries enable row level security;
alter table memory.weekly_summaries enable row level security;
alter table memory.monthly_summaries enable row level security;
alter table memory.yearly_comparisons enable row level security;

-- Summaries are written by the jobs (service_role); users read theirs and may delete them.
create policy "Users and their tenant admins read conversation summaries" on memory.conversation_summaries
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
create policy "Users delete their conversation summaries" on memory.conversation_summaries
for delete to authenticated
using (user_id = (select auth.uid()));
create policy "Users and their tenant admins read weekly summaries" on memory.weekly_summaries
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
create policy "Users delete their weekly summaries" on memory.weekly_summaries
for delete to authenticated
using (user_id = (select auth.uid()));
create policy "Users and their tenant admins read monthly summaries" on memory.monthly_summaries
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
create policy "Users delete their monthly summaries" on memory.monthly_summaries
for delete to authenticated
using (user_id = (select auth.uid()));
create policy "Users and their tenant admins read yearly comparisons" on memory.yearly_comparisons
for select to authenticated
using (user_id = (select auth.uid()) or tenant_id = any((select memory_private.administered_tenants())::uuid[]));
create policy "Users delete their yearly comparisons" on memory.yearly_comparisons
for delete to authenticated
using (user_id = (select auth.uid()));

grant select, delete on memory.conversation_summaries, memory.weekly_summaries, memory.monthly_summaries,
memory.yearly_comparisons to authenticated;
grant select, insert, update, delete on memory.conversation_summaries, memory.weekly_summaries,
memory.monthly_summaries, memory.yearly_comparisons to service_role;

-- Why: the one place an extraction job is queued, for the turn trigger and for requests alike:
-- the gate is checked for the message's author (in together mode, a participant), a message
-- already extracted queues nothing, and a finished job of a message that was never extracted
-- (skipped while the gate was closed) is queued again. Internal: callers use enqueue_extraction.
create function memory_private.queue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_message memory.messages;
    v_author uuid;
begin
    select m.* into v_message from memory.messages as m where m.id = p_message_id and m.role = 'user';
    if not found or exists (select 1 from memory.memory_extractions as e where e.source_message_id = p_message_id) then
        return null;
    end if;
    v_author := coalesce(v_message.author_id, v_message.user_id);
    if memory_private.gate_reason(v_author, v_message.id) is not null then
        return null;
    end if;
    return memory_private.enqueue(
        'extract',
        jsonb_build_object('source_message_id', v_message.id, 'conversation_id', v_message.conversation_id),
        'message:' || v_message.id, v_author, null, true
    );
end
$$;

-- Why: extraction on request: a signed-in caller may only queue messages they wrote.
create function memory_private.enqueue_extraction(p_message_id bigint)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
begin
    if (select auth.uid()) is not null and (select auth.uid()) is distinct from (
        select coalesce(m.author_id, m.user_id) from memory.messages as m where m.id = p_message_id
    ) then
        return null;
    end if;
    return memory_private.queue_extraction(p_message_id);
end
$$;
grant execute on function memory_private.enqueue_extraction(bigint) to authenticated, service_role;

-- Why: seed 004's fire-and-forget after the assistant answers, done in the database so no app
-- path can forget it: extraction when the gate is open for the turn's author, a conversation
-- summary every summary_interval turns, a title after the first turn. Dedup keys make a
-- re-delivered trigger harmless.
create function memory_private.enqueue_turn_jobs()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_interval integer := (memory_private.setting('summary_interval'))::integer;
begin
    perform memory_private.queue_extraction(m.id)
    from memory.messages as m
    where m.conversation_id = new.conversation_id and m.turn_number = new.turn_number and m.role = 'user';
    if new.turn_number % v_interval = 0 then
        perform memory_private.enqueue(
            'summarize_conversation',
            jsonb_build_object(
                'conversation_id', new.conversation_id,
                'from_turn', new.turn_number - v_interval + 1, 'to_turn', new.turn_number
            ),
            'conversation:' || new.conversation_id || ':' || new.turn_number, new.user_id
        );
    end if;
    if new.turn_number = 1 and exists (
        select 1 from memory.conversations as c where c.id = new.conversation_id and c.title is null
    ) then
        perform memory_private.enqueue(
            'title', jsonb_build_object('conversation_id', new.conversation_id),
            'title:' || new.conversation_id, new.user_id
        );
    end if;
    return null;
end
$$;

create trigger messages_enqueue_turn_jobs
after insert on memory.messages
for each row when (new.role = 'assistant')
execute function memory_private.enqueue_turn_jobs();

-- Week and month arithmetic in one place. A week is the ISO week (Monday to Sunday) in the
-- profile's time zone; a week belongs to the month that holds its Thursday, as ISO years do.
create function memory_private.local_week_start(p_at timestamptz, p_time_zone text)
returns date
language sql
stable
set search_path = ''
as $$
    select date_trunc('week', p_at at time zone p_time_zone)::date
$$;
grant execute on function memory_private.local_week_start(timestamptz, text) to authenticated, service_role;

-- Why: the weekly cron job. For every user and profile with conversation summaries in a
-- week that has ended in the profile's time zone and has no weekly summary yet, queue one. A
-- missed run heals itself: the next run finds the same gap (up to summary_lookback back).
create function memory_private.enqueue_due_weekly_summaries(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_count integer := 0;
    v_week record;
begin
    for v_week in
        select distinct s.user_id, s.profile_id, memory_private.local_week_start(s.created_at, p.timezone) as week_start
        from memory.conversation_summaries as s
        join memory.profiles as p on p.id = s.profile_id and p.user_id = s.user_id
        where s.created_at > p_now - (memory_private.setting('summary_lookback') #>> '{}')::interval
            and s.created_at <= p_now
            and memory_private.local_week_start(s.created_at, p.timezone) + 7 <= (p_now at time zone p.timezone)::date
    loop
        if not exists (
            select 1 from memory.weekly_summaries as w
            where w.user_id = v_week.user_id and w.profile_id = v_week.profile_id
                and w.week_start_date = v_week.week_start
        ) and memory_private.enqueue(
            'summarize_week',
            jsonb_build_object('profile_id', v_week.profile_id, 'week_start', v_week.week_start),
            format('week:%s:%s', v_week.profile_id, v_week.week_start), v_week.user_id
        ) is not null then
            v_count := v_count + 1;
        end if;
    end loop;
    return v_count;
end
$$;
grant execute on function memory_private.enqueue_due_weekly_summaries(timestamptz) to service_role;

-- Why: the monthly cron job: months whose last week has ended in the profile's time zone, that
-- have weekly summaries and no monthly summary yet.
create function memory_private.enqueue_due_monthly_summaries(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_count integer := 0;
    v_month record;
begin
    for v_month in
        select distinct w.user_id, w.profile_id, date_trunc('month', w.week_start_date + 3)::date as month_start
        from memory.weekly_summaries as w
        join memory.profiles as p on p.id = w.profile_id
        where w.week_start_date > (p_now - (memory_private.setting('summary_lookback') #>> '{}')::interval
            - interval '1 month')::date
            -- Its last week (the one holding its last Thursday) has ended locally.
            and date_trunc('week', (date_trunc('month', w.week_start_date + 3) + interval '1 month')::date - 4)::date + 7
            <= (p_now at time zone p.timezone)::date
    loop
        if not exists (
            select 1 from memory.monthly_summaries as m
            where m.user_id = v_month.user_id and m.profile_id = v_month.profile_id
                and m.year = extract(year from v_month.month_start) and m.month = extract(month from v_month.month_start)
        ) and memory_private.enqueue(
            'summarize_month',
            jsonb_build_object('profile_id', v_month.profile_id, 'month_start', v_month.month_start),
            format('month:%s:%s', v_month.profile_id, to_char(v_month.month_start, 'YYYY-MM')), v_month.user_id
        ) is not null then
            v_count := v_count + 1;
        end if;
    end loop;
    return v_count;
end
$$;
grant execute on function memory_private.enqueue_due_monthly_summaries(timestamptz) to service_role;

-- Why: seed 004's `?action=backfill&year&month`: (re)generate one month of a profile: its weekly
-- summaries that are missing (all of them with p_regenerate) and then the month itself. The
-- monthly job waits for the weekly ones (memory.defer_job). Returns the jobs queued.
create function memory.backfill_month(
    p_profile_id uuid, p_year integer, p_month integer, p_regenerate boolean default false
)
returns integer
language plpgsql
set search_path = ''
as $$
declare
    v_profile memory.profiles;
    v_month_start date;
    v_week date;
    v_count integer := 0;
begin
    if p_month not between 1 and 12 or p_year not between 1970 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range';
    end if;
    select p.* into v_profile from memory.profiles as p where p.id = p_profile_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    v_month_start := make_date(p_year, p_month, 1);
    -- Weeks whose Thursday falls in the month.
    for v_week in
        select d::date from generate_series(
            date_trunc('week', v_month_start)::date, (v_month_start + interval '1 month')::date, interval '7 days'
        ) as d
        where date_trunc('month', d::date + 3) = v_month_start
    loop
        if (p_regenerate or not exists (
            select 1 from memory.weekly_summaries as w where w.profile_id = p_profile_id and w.week_start_date = v_week
        )) and memory_private.enqueue(
            'summarize_week', jsonb_build_object('profile_id', p_profile_id, 'week_start', v_week),
            format('week:%s:%s', p_profile_id, v_week), v_profile.user_id, null, true
        ) is not null then
            v_count := v_count + 1;
        end if;
    end loop;
    if memory_private.enqueue(
        'summarize_month', jsonb_build_object('profile_id', p_profile_id, 'month_start', v_month_start),
        format('month:%s:%s', p_profile_id, to_char(v_month_start, 'YYYY-MM')), v_profile.user_id, null, true
    ) is not null then
        v_count := v_count + 1;
    end if;
    return v_count;
end
$$;
grant execute on function memory.backfill_month(uuid, integer, integer, boolean) to service_role;

-- Why: a signed-in user viewing their month may ask for the comparison; only of their own
-- profile (RLS hid the others from compare_year already; this checks again as the owner).
create function memory_private.enqueue_year_comparison(p_profile_id uuid, p_year integer, p_month integer)
returns bigint
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_user uuid := (select p.user_id from memory.profiles as p where p.id = p_profile_id);
begin
    if v_user is null or ((select auth.uid()) is not null and v_user <> (select auth.uid())) then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    if p_month is null or p_month not between 1 and 12 or p_year is null or p_year not between 1971 and 9999 then
        raise exception using errcode = '22023', message = 'year and month out of range';
    end if;
    -- Nothing to compose without both months, nothing to do when the comparison is stored.
    if (select count(*) from memory.monthly_summaries as m
        where m.profile_id = p_profile_id and m.month = p_month and m.year in (p_year - 1, p_year)) < 2
        or exists (select 1 from memory.yearly_comparisons as y
            where y.profile_id = p_profile_id and y.year = p_year and y.month = p_month) then
        return null;
    end if;
    -- A dead or deleted-result job is queued again: the app asking again is the retry.
    return memory_private.enqueue(
        'compare_year', jsonb_build_object('profile_id', p_profile_id, 'year', p_year, 'month', p_month),
        format('compare:%s:%s-%s', p_profile_id, p_year, p_month), v_user, null, true
    );
end
$$;
grant execute on function memory_private.enqueue_year_comparison(uuid, integer, integer) to authenticated, service_role;

-- Why: seed 004's compare-yearly-patterns, on demand when a month is viewed: the stored
-- comparison if there is one, else a queued job composing it from the two stored monthly
-- summaries (never from raw memories).
create function memory.compare_year(p_profile_id uuid, p_year integer, p_month integer)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
    v_profile memory.profiles;
    v_existing memory.yearly_comparisons;
begin
    select p.* into v_profile from memory.profiles as p where p.id = p_profile_id;
    if not found then
        raise exception using errcode = 'P0002', message = 'profile not found';
    end if;
    select y.* into v_existing from memory.yearly_comparisons as y
    where y.profile_id = p_profile_id and y.year = p_year and y.month = p_month;
    if found then
        return jsonb_build_object('status', 'ready', 'comparison', v_existing.comparison);
    end if;
    if not exists (
        select 1 from memory.monthly_summaries as m
        where m.profile_id = p_profile_id and ((m.year = p_year and m.month = p_month)
            or (m.year = p_year - 1 and m.month = p_month))
        group by m.profile_id having count(*) = 2
    ) then
        return jsonb_build_object('status', 'unavailable', 'reason', 'both months need a monthly summary');
    end if;
    perform memory_private.enqueue_year_comparison(v_profile.id, p_year, p_month);
    return jsonb_build_object('status', 'queued');
end
$$;
grant execute on function memory.compare_year(uuid, integer, integer) to authenticated, service_role;

-- Why: a job that cannot run yet (a month waiting for its weeks) goes back to the queue without
-- spending an attempt.
create function memory.defer_job(p_job_id bigint, p_worker text, p_delay interval default '30 seconds')
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.hold_lease(p_job_id, p_worker);
    update memory_private.jobs as j
    set status = 'queued', attempts = j.attempts - 1, leased_until = null, worker = null,
        run_after = now() + p_delay
    where j.id = p_job_id;
end
$$;
grant execute on function memory.defer_job(bigint, text, interval) to service_role;

revoke execute on all routines in schema memory, memory_private from public;
