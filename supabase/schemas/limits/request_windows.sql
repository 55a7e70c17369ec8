-- Why: a chat answer is a model call and a search with words an embedding, each paid for by the
-- team: a user's script could spend without bound. A user may make chat_rate_limit chat requests
-- and search_rate_limit searches a minute (0: no limit); one more is refused with 54000 before
-- anything is asked of a model. Each user and kind has one row, the minute it counts and how many
-- were taken in it, so a request costs one upsert of one row and no history is kept. The minutes
-- are fixed (a burst may take a minute's share at the end of one and the next at the start of the
-- next). Private: only memory.take_request writes it.
create table memory_private.request_windows (
    user_id uuid not null references memory.users (id) on delete cascade,
    kind text not null check (kind in ('chat', 'search')),
    window_start timestamptz not null,
    used integer not null check (used > 0),
    primary key (user_id, kind)
);

comment on table memory_private.request_windows is
'Requests a user took in the current minute, per kind (memory.take_request).';

alter table memory_private.request_windows enable row level security;

grant select on memory_private.request_windows to service_role;

-- Takes one request of p_kind for p_user_id: returns how many are left in this minute (null: no
-- limit), or raises 54000 when none is, taking nothing. A signed-in user takes only their own.
create function memory_private.take_request(p_user_id uuid, p_kind text)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_limit integer;
    v_used integer;
begin
    if (select auth.uid()) is not null and p_user_id <> (select auth.uid()) then
        raise exception using errcode = '42501', message = 'a user takes only their own requests';
    end if;
    if p_kind is null or p_kind not in ('chat', 'search') then
        raise exception using errcode = '22023', message = 'the kind of request must be chat or search';
    end if;
    v_limit := memory_private.number_setting(p_kind || '_rate_limit', 0);
    if v_limit = 0 then
        return null;
    end if;
    insert into memory_private.request_windows as w (user_id, kind, window_start, used)
    values (p_user_id, p_kind, date_trunc('minute', now()), 1)
    on conflict (user_id, kind) do update
    set window_start = excluded.window_start,
        used = case when w.window_start = excluded.window_start then w.used + 1 else 1 end
    returning w.used into v_used;
    if v_used > v_limit then
        raise exception using errcode = '54000',
            message = format('rate limit: %s requests, %s per user per minute', p_kind, v_limit),
            hint = 'Retry after a minute.';
    end if;
    return v_limit - v_used;
end
$$;

revoke all on function memory_private.take_request(uuid, text) from public, anon, authenticated, service_role;
grant execute on function memory_private.take_request(uuid, text) to authenticated, service_role;

-- The RPC: the signed-in user's request (registered on their first), or the named user's for the
-- service role.
create function memory.take_request(p_kind text, p_user_id uuid default null)
returns integer
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.take_request(memory_private.writing_user(p_user_id), p_kind);
end
$$;

revoke all on function memory.take_request(text, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.take_request(text, uuid) to authenticated, service_role;
