-- Why: BM25 needs each query term's document frequency among the user's messages, and counting it
-- per query grew with the history. A pg_cron job folds new messages in every minute and takes
-- deleted ones out, off the write path (a delete only notes what it removed, in search_unfolds);
-- messages not folded yet, and deleted ones not unfolded yet, are counted at query time, so
-- frequencies stay right while the job lags.
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

-- Deleted or edited messages, waiting for a fold to take their words out of search_terms,
-- search_corpus and search_postings (and to count an edited one's words again). One note per
-- message: the words the fold counted. Written by the triggers below for every message, whatever
-- the fold's watermark they see; the fold that passes a message's id keeps its note only if it
-- counted the message, and the next fold takes the words out.
create table memory_private.search_unfolds (
    user_id uuid not null references memory.users (id) on delete cascade,
    search tsvector not null,
    message_id bigint primary key
);

comment on table memory_private.search_unfolds is
'Deleted or edited messages whose folded words the next search-term fold takes out of the statistics.';

create index search_unfolds_user_id_idx on memory_private.search_unfolds (user_id);

alter table memory_private.search_unfolds enable row level security;

create policy "Users read what is pending for their own statistics" on memory_private.search_unfolds
for select to authenticated
using (user_id = (select auth.uid()));

grant select on memory_private.search_unfolds to authenticated;
grant select on memory_private.search_unfolds to service_role;

-- Count the next messages (at most p_batch, by id) into search_terms and search_corpus and post
-- their lexemes to search_postings, and take out the deleted ones noted since; note the users now
-- due a build of their vector lists; returns how many messages were counted. One fold at a time (the row lock). It passes no id that an open
-- transaction may still commit: when the writers open at its start do not end within p_wait, it
-- counts no new message this time. A message deleted or edited while a fold counts it is noted
-- whatever the watermark its writer saw; the fold that passed it keeps the note with the words it
-- counted (none, if it did not count the message), so the next fold takes out exactly those. When
-- a delete read the watermark to decide, a message deleted while a fold posted it kept its
-- postings, the deleted message's words, for good.
create function memory_private.fold_search_terms(p_batch integer default 100000, p_wait interval default '1 second')
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_from bigint;
    v_to bigint;
    v_edited bigint[];
    -- The users whose counts this fold changed.
    v_counted uuid[];
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    -- Notes of messages a fold has passed: their words were counted (notes of messages not passed
    -- yet wait for the fold that passes them).
    with gone as (
        delete from memory_private.search_unfolds as g where g.message_id <= v_from
        returning g.user_id, g.message_id, g.search
    ),
    sizes as (
        update memory_private.search_corpus as c
        set documents = greatest(0, c.documents - g.documents), lexemes = greatest(0, c.lexemes - g.lexemes)
        from (
            select x.user_id, count(*) as documents, sum(length(x.search)) as lexemes from gone as x group by x.user_id
        ) as g
        where c.user_id = g.user_id
    ),
    -- Each posting's whole key first, so each is deleted by one probe (joined to the notes alone,
    -- a plan read the user's postings once for every note).
    gone_postings as materialized (
        select x.user_id, w.lexeme, x.message_id
        from gone as x
        cross join lateral unnest(tsvector_to_array(x.search)) as w (lexeme)
    ),
    postings as (
        delete from memory_private.search_postings as p
        using gone_postings as g
        where p.user_id = g.user_id and p.lexeme = g.lexeme and p.message_id = g.message_id
    ),
    terms as (
        update memory_private.search_terms as s
        set documents = greatest(0, s.documents - g.documents)
        from (
            select x.user_id, x.lexeme, count(*)::integer as documents
            from gone_postings as x
            group by x.user_id, x.lexeme
        ) as g
        where s.user_id = g.user_id and s.lexeme = g.lexeme
    )
    -- An edited message is still there: its words now are counted below.
    select array_agg(x.message_id) from gone as x
    where exists (select 1 from memory.messages as m where m.id = x.message_id)
    into v_edited;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is not null and not memory_private.await_message_writers(p_wait) then
        v_to := null;
    end if;
    if v_to is null and v_edited is null then
        return 0;
    end if;
    -- Read after the wait: every message up to v_to has committed or never will.
    with batch as materialized (
        select m.id, m.user_id, m.search from memory.messages as m where m.id > v_from and m.id <= v_to
        union all
        select m.id, m.user_id, m.search from memory.messages as m where m.id = any(v_edited)
    ),
    postings as (
        insert into memory_private.search_postings (user_id, lexeme, message_id, frequency, length)
        select b.user_id, w.lexeme, b.id, cardinality(w.positions), length(b.search)
        from batch as b
        cross join lateral unnest(b.search) as w (lexeme, positions, weights)
        -- In the index's order: a term's new postings go to the same leaf pages.
        order by b.user_id, w.lexeme, b.id
    ),
    sizes as (
        insert into memory_private.search_corpus as c (user_id, documents, lexemes)
        select b.user_id, count(*), sum(length(b.search)) from batch as b group by b.user_id
        on conflict (user_id) do update
        set documents = c.documents + excluded.documents, lexemes = c.lexemes + excluded.lexemes
        returning c.user_id
    ),
    -- The notes this fold's range already holds (writers that committed before the batch was
    -- read): a message the batch does not hold was never counted; one it holds was counted with
    -- the batch's words. Notes committed later hold the words the batch read.
    uncounted as (
        delete from memory_private.search_unfolds as g
        where g.message_id > v_from and g.message_id <= v_to
            and not exists (select 1 from batch as b where b.id = g.message_id)
    ),
    counted as (
        update memory_private.search_unfolds as g set search = b.search
        from batch as b
        where g.message_id = b.id and g.message_id > v_from and g.message_id <= v_to
            and g.search is distinct from b.search
    ),
    terms as (
        insert into memory_private.search_terms as s (user_id, lexeme, documents)
        select b.user_id, w.lexeme, count(*)
        from batch as b
        cross join lateral unnest(tsvector_to_array(b.search)) as w (lexeme)
        group by b.user_id, w.lexeme
        on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents
    )
    select array_agg(z.user_id) from sizes as z
    into v_counted;
    if v_to is null then
        return 0;
    end if;
    perform memory_private.note_vector_lists_due(v_counted);
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
end
$$;

revoke all on function memory_private.fold_search_terms(integer, interval)
from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer, interval) to service_role;

-- Deleted messages are noted for the fold (one insert per statement): the delete itself updates
-- no statistics row. A message edited since it was counted already holds the note of the words
-- that were.
create function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    insert into memory_private.search_unfolds (user_id, message_id, search)
    select o.user_id, o.id, o.search
    from old_messages as o
    -- An erased user's statistics went with the user.
    where exists (select 1 from memory.users as u where u.id = o.user_id)
    on conflict (message_id) do nothing;
    return null;
end
$$;

create trigger messages_unfold_search_terms
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.unfold_search_terms();

revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;

-- An edited message is noted with the words it had (once, however often it is edited before the
-- next fold), which the fold takes out if it counted them, then counts and posts its words now.
-- Edits are rare (the service role's corrections), so a row trigger.
create function memory_private.refold_edited_message()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    insert into memory_private.search_unfolds (user_id, message_id, search)
    values (old.user_id, old.id, old.search)
    on conflict (message_id) do nothing;
    return null;
end
$$;

create trigger messages_refold_edited_message
after update of content on memory.messages
for each row when (old.search is distinct from new.search)
execute function memory_private.refold_edited_message();

revoke all on function memory_private.refold_edited_message() from public, anon, authenticated, service_role;
