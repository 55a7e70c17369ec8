-- Type weights are data: selection multiplies by them, and a team can retune them with an update.
-- Seed 004 fixes goal, pattern, relationship, fact and emotion; the seed 002 types sit between:
-- decisions and preferences steer answers nearly as much as goals, projects a little more than a
-- plain fact, entities (names, places) are reference material.
create table memory.memory_types (
    type text primary key check (type ~ '^[a-z_]+$'),
    weight numeric(3, 2) not null check (weight > 0),
    description text not null
);

alter table memory.memory_types enable row level security;

create policy "Signed-in users read memory types" on memory.memory_types
for select to authenticated
using (true);

grant select on memory.memory_types to authenticated;
grant select, insert, update, delete on memory.memory_types to service_role;

insert into memory.memory_types (type, weight, description) values
('goal', 1.50, 'Something the user wants to achieve (seed 004).'),
('pattern', 1.50, 'A recurring behaviour or tendency (seed 004).'),
('relationship', 1.30, 'A person in the user''s life and how they relate (seed 004).'),
('decision', 1.20, 'A choice the user has made (seed 002).'),
('preference', 1.20, 'How the user likes things done (seed 002).'),
('project', 1.10, 'Ongoing work the user is doing (seed 002).'),
('fact', 1.00, 'A fact about the user (seeds 002, 004).'),
('entity', 0.90, 'A named thing the user refers to (seed 002).'),
('emotion', 0.80, 'How the user felt (seed 004).');
