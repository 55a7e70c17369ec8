-- How far (by message id) each background scan of new messages has read; one row per scan.
create table memory_private.message_scans (
    name text primary key,
    through bigint not null default 0
);

comment on table memory_private.message_scans is
'How far (by message id) each background scan of new messages has read.';

alter table memory_private.message_scans enable row level security;

create policy "Signed-in users read how far the term statistics go" on memory_private.message_scans
for select to authenticated
using (name = 'search_terms');

grant select on memory_private.message_scans to authenticated;
grant select on memory_private.message_scans to service_role;

-- The id of the last of the next p_batch messages after p_from (null: none).
create function memory_private.next_messages(p_from bigint, p_batch integer)
returns bigint
language plpgsql
stable
set search_path = ''
as $$
begin
    return (
        select max(n.id) from (select m.id from memory.messages as m where m.id > p_from order by m.id limit p_batch) as n
    );
end
$$;

revoke all on function memory_private.next_messages(bigint, integer) from public, anon, authenticated, service_role;

-- How far search_terms has counted (memory_private.message_scans); signed-in users read this
-- row, since their searches count the messages after it.
insert into memory_private.message_scans (name) values ('search_terms');
