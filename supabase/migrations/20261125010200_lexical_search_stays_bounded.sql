-- Lexical search whose cost stops growing with the history: term statistics kept per user, and
-- candidates drawn from the rarest terms first.
--
-- Why: BM25 needs each query term's document frequency among the user's messages. Counting it per
-- query (up to 20,000 matches per term) and scoring every match (up to 20,000 messages) made a
-- search at 42,000 turns sixty times slower than at 600. Now:
-- * memory_private.search_terms holds, per user and lexeme, in how many messages it occurs. A
--   pg_cron job folds new messages in every minute, by id, off the write path (a turn still
--   writes no extra row); deleted messages are taken out by a statement-level trigger. Messages
--   not folded yet are counted at query time, so frequencies are right even when the job lags
--   (then the cost grows with the lag, as before, not with the history). An edited message keeps
--   the counts of its first words: a frequency is a weight, and one edit moves it by one.
-- * The candidates are the newest messages holding the query's rarest terms, adding terms in
--   order of rarity while their frequencies sum to at most 2,000 (the rarest always), at most
--   2,000 messages; each candidate is scored on every query term. A history of a few thousand
--   turns is ranked exactly as before; beyond that, a message holding only common words of the
--   query can be left out, as a search engine's top-k pruning would.

create table memory_private.search_terms (
    user_id uuid not null references memory.users (id) on delete cascade,
    lexeme text not null,
    documents integer not null check (documents >= 0),
    primary key (user_id, lexeme)
);
alter table memory_private.search_terms enable row level security;
create policy "Users read the term statistics of their own messages" on memory_private.search_terms
for select to authenticated
using (user_id = (select auth.uid()));
revoke all on memory_private.search_terms from anon, authenticated, service_role;
grant select on memory_private.search_terms to authenticated;
grant select, insert, update, delete on memory_private.search_terms to service_role;
comment on table memory_private.search_terms is
'Per user and lexeme: in how many of the user''s messages it occurs (BM25''s document frequency).';

-- How far (by message id) search_terms has counted; one row.
create table memory_private.search_terms_folded (
    id boolean primary key default true check (id),
    through bigint not null default 0
);
alter table memory_private.search_terms_folded enable row level security;
create policy "Everyone signed in reads how far the statistics go" on memory_private.search_terms_folded
for select to authenticated
using (true);
revoke all on memory_private.search_terms_folded from anon, authenticated, service_role;
grant select on memory_private.search_terms_folded to authenticated, service_role;
insert into memory_private.search_terms_folded (through) values (0);

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
    v_count integer;
begin
    select f.through into v_from from memory_private.search_terms_folded as f for update;
    select max(n.id), count(*) into v_to, v_count
    from (select m.id from memory.messages as m where m.id > v_from order by m.id limit p_batch) as n;
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
    update memory_private.search_terms_folded set through = v_to;
    return v_count;
end
$$;
revoke all on function memory_private.fold_search_terms(integer) from public, anon, authenticated;
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
        where o.id <= (select f.through from memory_private.search_terms_folded as f)
        group by o.user_id, w.lexeme
    ) as g
    where s.user_id = g.user_id and s.lexeme = g.lexeme;
    return null;
end
$$;
revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;

create trigger messages_unfold_search_terms
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.unfold_search_terms();

select memory_private.fold_search_terms(2147483647);

insert into memory_private.schedules (name, schedule, command) values
('supamem-fold-search-terms', '* * * * *', 'select memory_private.fold_search_terms()');
select memory_private.schedule_jobs();

create or replace function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_documents double precision;
    v_average double precision;
    v_folded bigint := (select f.through from memory_private.search_terms_folded as f);
    v_frequencies jsonb;
    v_rarest text[];
begin
    if cardinality(v_terms) = 0 then
        return;
    end if;
    select greatest(c.documents, 1), c.lexemes::double precision / greatest(c.documents, 1)
    into v_documents, v_average
    from memory_private.search_corpus as c where c.user_id = p_user_id;
    if not found then
        return;
    end if;
    -- Each term's frequency: the folded count plus the user's messages not folded yet.
    select
        jsonb_object_agg(f.term, f.df),
        array_agg(f.term order by f.df, f.term) filter (where f.running <= 2000 or f.position = 1)
    into v_frequencies, v_rarest
    from (
        select d.term, d.df, sum(d.df) over w as running, row_number() over w as position
        from (
            select t.term, coalesce(s.documents, 0) + (
                select count(*) from (
                    select 1 from memory.messages as m
                    where m.user_id = p_user_id and m.id > v_folded and m.search @@ quote_literal(t.term)::tsquery
                    limit 20000
                ) as u
            ) as df
            from unnest(v_terms) as t (term)
            left join memory_private.search_terms as s on s.user_id = p_user_id and s.lexeme = t.term
        ) as d
        window w as (order by d.df, d.term)
    ) as f;
    return query
    with matches as (
        select m.id, m.search
        from memory.messages as m
        where m.user_id = p_user_id and m.search @@ memory_private.any_term(v_rarest)
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
        order by m.id desc
        limit 2000
    )
    select x.id, sum(memory_private.bm25(
        cardinality(w.positions), length(x.search), v_average,
        greatest((v_frequencies ->> w.lexeme)::double precision, 1), v_documents
    ))
    from matches as x
    cross join lateral unnest(x.search) as w (lexeme, positions, weights)
    where v_frequencies ? w.lexeme
    group by x.id
    order by 2 desc, x.id
    limit p_limit;
end
$$;
