-- Why: a worker that finds a provider down pauses its jobs (jobs/worker.py); kept here, the pause
-- outlives the worker, so the next run (a --once run from cron, a restarted or another worker)
-- starts paused and sends one job when the pause ends, instead of spending the attempts of the
-- first jobs it claims to find out again. A provider is its kind and the endpoint its requests go
-- to: workers of one database may send to different servers. Private: only these functions touch it.
create table memory_private.provider_outages (
    provider text not null check (provider in ('model', 'embeddings server')),
    endpoint text not null check (length(endpoint) <= 2000),
    -- The pause's length, which doubles each time the job sent after it is unanswered too.
    pause interval not null check (pause > interval '0'),
    paused_until timestamptz not null,
    since timestamptz not null default now(),
    primary key (provider, endpoint)
);

comment on table memory_private.provider_outages is
'Providers the workers found down, and until when their jobs wait.';

alter table memory_private.provider_outages enable row level security;

grant select, insert, update, delete on memory_private.provider_outages to service_role;

-- Why: a worker found the provider down, or the job sent after the pause unanswered too: its jobs
-- wait p_wait from now (the pause, or longer for a Retry-After); p_pause is the pause's length.
create function memory.provider_unavailable(p_provider text, p_endpoint text, p_pause interval, p_wait interval)
returns void
language plpgsql
set search_path = ''
as $$
begin
    if p_provider is null or p_provider not in ('model', 'embeddings server') then
        raise exception using errcode = '22023',
            message = format('provider must be ''model'' or ''embeddings server'', got %L', left(p_provider, 100));
    end if;
    if length(p_endpoint) > 2000 then
        raise exception using errcode = '22023', message = 'endpoint must be at most 2000 characters';
    end if;
    -- A worker pauses for seconds to minutes: a day is far past any pause, and keeps the sums in range.
    if p_pause is null or p_pause <= interval '0' or p_pause > interval '1 day' then
        raise exception using errcode = '22023',
            message = format('pause must be more than 0 and at most a day, got %s', coalesce(p_pause::text, 'null'));
    end if;
    if p_wait is null or p_wait > interval '1 day' then
        raise exception using errcode = '22023',
            message = format('wait must be at most a day, got %s', coalesce(p_wait::text, 'null'));
    end if;
    insert into memory_private.provider_outages as o (provider, endpoint, pause, paused_until)
    values (p_provider, p_endpoint, p_pause, now() + greatest(p_wait, interval '0'))
    on conflict (provider, endpoint) do update
    set pause = excluded.pause, paused_until = greatest(o.paused_until, excluded.paused_until);
end
$$;

revoke all on function memory.provider_unavailable(text, text, interval, interval)
from public, anon, authenticated, service_role;
grant execute on function memory.provider_unavailable(text, text, interval, interval) to service_role;

-- Why: the provider answered a job: its outage is over for every worker. Whether there was one.
create function memory.provider_answered(p_provider text, p_endpoint text)
returns boolean
language plpgsql
set search_path = ''
as $$
begin
    delete from memory_private.provider_outages as o where o.provider = p_provider and o.endpoint = p_endpoint;
    return found;
end
$$;

revoke all on function memory.provider_answered(text, text) from public, anon, authenticated, service_role;
grant execute on function memory.provider_answered(text, text) to service_role;

-- Why: what a starting worker takes over: each provider found down, its pause's length and how long
-- its jobs still wait, in seconds (zero once the pause is over: the next job sent is the probe).
create function memory.provider_outages()
returns table (provider text, endpoint text, pause_seconds double precision, wait_seconds double precision)
language plpgsql
stable
set search_path = ''
as $$
begin
    return query
    select o.provider, o.endpoint, extract(epoch from o.pause)::double precision,
        greatest(extract(epoch from o.paused_until - now()), 0)::double precision
    from memory_private.provider_outages as o
    order by o.provider, o.endpoint;
end
$$;

revoke all on function memory.provider_outages() from public, anon, authenticated, service_role;
grant execute on function memory.provider_outages() to service_role;
