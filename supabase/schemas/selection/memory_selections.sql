-- A profile's memory selection, kept ahead of the prompt so a selection scores a handful of rows:
-- the candidates are every pinned memory and the best 2 x memory_select_limit by score when last
-- built, and every other live memory of the profile ranks at most as the bound (its score, then its
-- id, as the selection breaks ties), now and later, unless a note names it. That holds because a
-- score only falls with time and every write that could lift a memory notes it
-- (memory_private.memory_selection_notes). select_memories scores the candidates, the noted
-- memories and what the query lifts, and reads every live memory only when they cannot prove the
-- answer.
create table memory_private.memory_selections (
    profile_id uuid primary key references memory.profiles (id) on delete cascade,
    candidates uuid[] not null default '{}',
    -- null: the candidates are all of the profile's live memories; 'Infinity': not built yet.
    bound numeric,
    -- The memory that scored the bound: a tie with it is broken by id, as the selection breaks ties.
    bound_id uuid,
    -- When the candidates may stop proving a selection: the minutely refresh rebuilds them by then.
    stale_at timestamptz not null default now()
);

comment on table memory_private.memory_selections is
'Each profile''s candidate memories for selection and the score no other live memory exceeds.';

create index memory_selections_stale_at_idx on memory_private.memory_selections (stale_at);

alter table memory_private.memory_selections enable row level security;

create policy "Readers of the profile read its selection" on memory_private.memory_selections
for select to authenticated
using (exists (
    select 1 from memory.profiles as p
    where p.id = profile_id
));

grant select on memory_private.memory_selections to authenticated, service_role;

-- What writes did to a profile's memories since its selection was built: a memory that may now
-- outrank the bound (memory_id), or a candidate that left or fell (memory_id null), which makes
-- the selection due. Writers only insert here, never lock or update a selection, so memory writes
-- never wait on each other for it; the refresh takes a profile's notes with the scan it builds from.
create table memory_private.memory_selection_notes (
    id bigint generated always as identity primary key,
    profile_id uuid not null references memory.profiles (id) on delete cascade,
    memory_id uuid
);

comment on table memory_private.memory_selection_notes is
'Memories written since their profile''s selection was built: candidates until the next build.';

create index memory_selection_notes_profile_id_idx on memory_private.memory_selection_notes (profile_id);

alter table memory_private.memory_selection_notes enable row level security;

create policy "Readers of the profile read its selection notes" on memory_private.memory_selection_notes
for select to authenticated
using (exists (
    select 1 from memory.profiles as p
    where p.id = profile_id
));

grant select on memory_private.memory_selection_notes to authenticated, service_role;

-- Why: a new profile has no memories, so its candidates are all of them (bound null) at once.
create function memory_private.start_memory_selections()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    insert into memory_private.memory_selections (profile_id, bound, stale_at)
    select p.id, null, 'infinity' from new_profiles as p;
    return null;
end
$$;

revoke all on function memory_private.start_memory_selections() from public, anon, authenticated, service_role;

create trigger profiles_start_memory_selections
after insert on memory.profiles
referencing new table as new_profiles
for each statement execute function memory_private.start_memory_selections();
