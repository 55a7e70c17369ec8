-- Why: BM25 needs each query term's document frequency among the user's messages, and counting it
-- per query grew with the history. A pg_cron job folds new messages in every minute, off the write
-- path, and a statement-level trigger takes deleted ones out; messages not folded yet are counted
-- at query time, so frequencies stay right while the job lags.
create table memory_private.search_terms (
    user_id uuid not null references memory.users (id) on delete cascade,
    lexeme text not null,
    documents integer not null check (documents >= 0),
    primary key (user_id, lexeme)
);

comment on table memory_private.search_terms is
'Per user and lexeme: in how many of the user''s messages it occurs (BM25''s document frequency).';

alter table memory_private.search_terms enable row level security;

create policy "Users read the term statistics of their own messages" on memory_private.search_terms
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.search_terms to authenticated;
grant select, insert, update, delete on memory_private.search_terms to service_role;

-- Count the next messages (at most p_batch, by id) into search_terms; returns how many. One fold
-- at a time (the row lock); a message whose transaction commits after a fold passed its id is
-- not counted (a weight off by one, not a wrong result).
create function memory_private.fold_search_terms(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_from bigint;
    v_to bigint;
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is null then
        return 0;
    end if;
    insert into memory_private.search_terms as s (user_id, lexeme, documents)
    select m.user_id, w.lexeme, count(*)
    from memory.messages as m
    cross join lateral unnest(tsvector_to_array(m.search)) as w (lexeme)
    where m.id > v_from and m.id <= v_to
    group by m.user_id, w.lexeme
    on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents;
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
end
$$;

revoke all on function memory_private.fold_search_terms(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer) to service_role;

-- Deleted messages that were counted leave the counts (one update per statement).
create function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    update memory_private.search_terms as s
    set documents = greatest(0, s.documents - g.documents)
    from (
        select o.user_id, w.lexeme, count(*)::integer as documents
        from old_messages as o
        cross join lateral unnest(tsvector_to_array(o.search)) as w (lexeme)
        where o.id <= (select f.through from memory_private.message_scans as f where f.name = 'search_terms')
        group by o.user_id, w.lexeme
    ) as g
    where s.user_id = g.user_id and s.lexeme = g.lexeme;
    return null;
end
$$;

create trigger messages_unfold_search_terms
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.unfold_search_terms();

revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;
