-- The kit's pg_cron jobs, as data (schedules/entries.sql holds the rows), and a team may
-- retune a schedule with an update followed by memory_private.schedule_jobs().
create table memory_private.schedules (
    name text primary key check (name ~ '^supamem-[a-z-]+$'),
    schedule text not null,
    command text not null
);

alter table memory_private.schedules enable row level security;

grant select on memory_private.schedules to service_role;
