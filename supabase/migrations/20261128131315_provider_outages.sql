-- A provider found down is noted in the database (memory_private.provider_outages): a worker that
-- starts, a --once run from cron among them, takes over the pause and sends one job when it ends,
-- instead of spending the attempts of the first jobs it claims to find the provider down again.
create table memory_private.provider_outages (
    provider text not null,
    endpoint text not null,
    pause interval not null,
    paused_until timestamp with time zone not null,
    since timestamp with time zone not null default now()
);


alter table memory_private.provider_outages enable row level security;

create unique index provider_outages_pkey on memory_private.provider_outages using btree (provider, endpoint);

alter table memory_private.provider_outages
add constraint provider_outages_pkey primary key using index provider_outages_pkey;

alter table memory_private.provider_outages add constraint provider_outages_endpoint_check check (
    (length(endpoint) <= 2000)
) not valid;

alter table memory_private.provider_outages validate constraint "provider_outages_endpoint_check";

alter table memory_private.provider_outages add constraint provider_outages_pause_check check (
    (pause > '00:00:00'::interval)
) not valid;

alter table memory_private.provider_outages validate constraint "provider_outages_pause_check";

alter table memory_private.provider_outages add constraint provider_outages_provider_check check (
    (provider = any(array['model'::text, 'embeddings server'::text]))
) not valid;

alter table memory_private.provider_outages validate constraint "provider_outages_provider_check";

set check_function_bodies = off;

create or replace function memory.provider_answered(p_provider text, p_endpoint text)
returns boolean
language plpgsql
set search_path to ''
as $function$
begin
    delete from memory_private.provider_outages as o where o.provider = p_provider and o.endpoint = p_endpoint;
    return found;
end
$function$;

create or replace function memory.provider_outages()
returns table (provider text, endpoint text, pause_seconds double precision, wait_seconds double precision)
language plpgsql
stable
set search_path to ''
as $function$
begin
    return query
    select o.provider, o.endpoint, extract(epoch from o.pause)::double precision,
        greatest(extract(epoch from o.paused_until - now()), 0)::double precision
    from memory_private.provider_outages as o
    order by o.provider, o.endpoint;
end
$function$;

create or replace function memory.provider_unavailable(
    p_provider text, p_endpoint text, p_pause interval, p_wait interval
)
returns void
language plpgsql
set search_path to ''
as $function$
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
$function$;

grant delete on table memory_private.provider_outages to service_role;

grant insert on table memory_private.provider_outages to service_role;

grant select on table memory_private.provider_outages to service_role;

grant update on table memory_private.provider_outages to service_role;


revoke all on function memory.provider_answered(text, text) from public, anon, authenticated, service_role;
grant execute on function memory.provider_answered(text, text) to service_role;
revoke all on function memory.provider_outages() from public, anon, authenticated, service_role;
grant execute on function memory.provider_outages() to service_role;
revoke all on function memory.provider_unavailable(text, text, interval, interval)
from public, anon, authenticated, service_role;
grant execute on function memory.provider_unavailable(text, text, interval, interval) to service_role;
comment on table memory_private.provider_outages is 'Providers the workers found down, and until when their jobs wait.';
