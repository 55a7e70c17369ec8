-- Why: seed 004's dashboard engagement (target: 20 % of users a month) counts who opens the memory
-- settings page. One row per user and day (UTC) they opened it, so a visit costs one insert that
-- does nothing when the day is counted already and no history of page views is kept. Private:
-- only memory.note_dashboard_visit writes it and memory.success_metrics reads it.
create table memory_private.dashboard_visits (
    user_id uuid not null references memory.users (id) on delete cascade,
    day date not null,
    primary key (user_id, day)
);

comment on table memory_private.dashboard_visits is
'Days (UTC) each user opened the memory dashboard (memory.note_dashboard_visit).';

alter table memory_private.dashboard_visits enable row level security;

grant select on memory_private.dashboard_visits to service_role;

-- Why: the page notes its own opening. A signed-in user notes only their own visit (naming another
-- user is 42501); the service role names the user (22023 without one); a user who is not
-- registered is P0002.
create function memory.note_dashboard_visit(p_user_id uuid default null)
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform memory_private.note_dashboard_visit(p_user_id);
end
$$;

revoke all on function memory.note_dashboard_visit(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.note_dashboard_visit(uuid) to authenticated, service_role;

-- Why: memory.note_dashboard_visit's body, run as the owner of the private table.
create function memory_private.note_dashboard_visit(p_user_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_uid uuid := (select auth.uid());
begin
    if v_uid is not null and p_user_id is not null and p_user_id <> v_uid then
        raise exception using errcode = '42501', message = 'a user notes only their own visits';
    end if;
    if coalesce(v_uid, p_user_id) is null then
        raise exception using errcode = '22023', message = 'name the user whose visit this is';
    end if;
    if not exists (select 1 from memory.users as u where u.id = coalesce(v_uid, p_user_id)) then
        raise exception using errcode = 'P0002', message = 'no user with that id (register_user makes one)';
    end if;
    insert into memory_private.dashboard_visits (user_id, day)
    values (coalesce(v_uid, p_user_id), (now() at time zone 'UTC')::date)
    on conflict do nothing;
end
$$;

revoke all on function memory_private.note_dashboard_visit(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.note_dashboard_visit(uuid) to authenticated, service_role;
