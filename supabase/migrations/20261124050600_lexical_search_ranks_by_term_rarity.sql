-- Lexical search that knows how rare a word is: BM25 in SQL, over stored tsvectors, bounded by
-- the user.
--
-- Why: search_messages recomputed to_tsvector for every message of the user on every query
-- (linear in the history) and ranked with ts_rank, which counts how often a query word occurs but
-- not how rare it is, so a telling word ("marathon") weighed no more than a common one ("went").
-- On conversations nobody tuned for, that ranked below a plain BM25. Now:
-- * messages store their tsvector (as memories do) and a GIN index on (user_id, search), through
--   btree_gin, finds one user's matching messages without touching anyone else's;
-- * each user's corpus size (live messages and their total length) is kept by statement-level
--   triggers, one row update per statement, so a query reads N and the average length at once;
-- * a query's terms are its first 32 distinct lexemes (of its first 10,000 characters), and at
--   most the user's 20,000 newest matching messages are scored, so no query can make the ranking
--   do unbounded work; each term's document frequency among the user's messages is counted
--   through the same index;
-- * the score is BM25 (k1 = 1.2, b = 0.75, the idf of Lucene's BM25, never negative):
--   sum over query terms of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average)),
--   with tf the occurrences of the term in the message and length its number of lexemes.
-- Memories use the same scoring over the user's live memories (few enough per user to count at
-- query time).

create extension if not exists btree_gin with schema extensions;

alter table memory.messages
add column search tsvector generated always as (to_tsvector('english'::regconfig, content)) stored;
create index messages_user_search_idx on memory.messages using gin (user_id, search);
comment on column memory.messages.search is 'The message''s lexemes (english), for search_messages.';

create table memory_private.search_corpus (
    user_id uuid primary key references memory.users (id) on delete cascade,
    documents bigint not null default 0 check (documents >= 0),
    lexemes bigint not null default 0 check (lexemes >= 0)
);
alter table memory_private.search_corpus enable row level security;
create policy "Users read the size of their own corpus" on memory_private.search_corpus
for select to authenticated
using (user_id = (select auth.uid()));
grant select on memory_private.search_corpus to authenticated, service_role;
comment on table memory_private.search_corpus is
'Per user: how many messages and lexemes BM25 ranks over (N and the average length).';

insert into memory_private.search_corpus (user_id, documents, lexemes)
select
    m.user_id,
    count(*) as documents,
    sum(length(m.search)) as lexemes
from memory.messages as m
group by m.user_id;

-- Why: BM25 needs the corpus size and average length per user at query time; counting them per
-- query is linear in the history. One update per statement (not per row) keeps the write path lean.
create function memory_private.count_search_corpus()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    if tg_op = 'INSERT' then
        insert into memory_private.search_corpus as s (user_id, documents, lexemes)
        select n.user_id, count(*), sum(length(n.search))
        from new_messages as n
        group by n.user_id
        on conflict (user_id) do update
        set documents = s.documents + excluded.documents, lexemes = s.lexemes + excluded.lexemes;
    else
        update memory_private.search_corpus as s
        set documents = greatest(0, s.documents - g.documents), lexemes = greatest(0, s.lexemes - g.lexemes)
        from (
            select o.user_id, count(*) as documents, sum(length(o.search)) as lexemes
            from old_messages as o
            group by o.user_id
        ) as g
        where s.user_id = g.user_id;
    end if;
    return null;
end
$$;

create trigger messages_count_search_corpus_insert
after insert on memory.messages
referencing new table as new_messages
for each statement execute function memory_private.count_search_corpus();

create trigger messages_count_search_corpus_delete
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.count_search_corpus();

-- Why: a query's terms, bounded: its first 32 distinct lexemes (english) in the order they
-- occur, read from its first 10,000 characters. A query with no lexeme has no terms.
create function memory_private.query_terms(p_query text)
returns text[]
language sql
immutable
set search_path = ''
as $$
    select coalesce(array_agg(t.lexeme order by t.first_position, t.lexeme), '{}')
    from (
        select w.lexeme, min(p.position) as first_position
        from unnest(to_tsvector('english'::regconfig, left(coalesce(p_query, ''), 10000))) as w (lexeme, positions, weights)
        cross join lateral unnest(w.positions) as p (position)
        group by w.lexeme
        order by min(p.position), w.lexeme
        limit 32
    ) as t
$$;
grant execute on function memory_private.query_terms(text) to authenticated, service_role;

-- Why: the terms OR-ed as a tsquery that matches lexemes exactly (no second stemming).
create function memory_private.any_term(p_terms text[])
returns tsquery
language sql
immutable
set search_path = ''
as $$
    select string_agg(quote_literal(t.term), ' | ')::tsquery from unnest(p_terms) as t (term)
$$;
grant execute on function memory_private.any_term(text[]) to authenticated, service_role;

-- Why: one term's BM25 contribution (k1 = 1.2, b = 0.75; Lucene's idf, never negative).
create function memory_private.bm25(
    p_tf double precision, p_length double precision, p_average_length double precision,
    p_df double precision, p_documents double precision
)
returns double precision
language sql
immutable
set search_path = ''
as $$
    select ln(1 + (p_documents - p_df + 0.5) / (p_df + 0.5))
        * p_tf * 2.2 / (p_tf + 1.2 * (0.25 + 0.75 * p_length / greatest(p_average_length, 1)))
$$;
grant execute on function memory_private.bm25(
    double precision, double precision, double precision, double precision, double precision
) to authenticated, service_role;

-- Why: BM25 over one user's live messages (optionally one conversation), best first. Runs as the
-- caller, so row-level security still decides which messages count.
create function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_query tsquery;
    v_documents double precision;
    v_average double precision;
begin
    if cardinality(v_terms) = 0 then
        return;
    end if;
    v_query := memory_private.any_term(v_terms);
    select greatest(c.documents, 1), c.lexemes::double precision / greatest(c.documents, 1)
    into v_documents, v_average
    from memory_private.search_corpus as c where c.user_id = p_user_id;
    if not found then
        return;
    end if;
    return query
    with frequencies as materialized (
        -- Counted up to 20,000: past that a term is common enough that its weight barely moves.
        select t.term, (
            select count(*) from (
                select 1 from memory.messages as m
                where m.user_id = p_user_id and m.search @@ quote_literal(t.term)::tsquery
                limit 20000
            ) as d
        )::double precision as df
        from unnest(v_terms) as t (term)
    ),
    matches as (
        select m.id, m.search
        from memory.messages as m
        where m.user_id = p_user_id and m.search @@ v_query
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
        order by m.id desc
        limit 20000
    )
    select x.id, sum(memory_private.bm25(
        cardinality(w.positions), length(x.search), v_average, f.df, v_documents
    ))
    from matches as x
    cross join lateral unnest(x.search) as w (lexeme, positions, weights)
    join frequencies as f on f.term = w.lexeme
    group by x.id
    order by 2 desc, x.id
    limit p_limit;
end
$$;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;

-- Why: BM25 over one user's live memories (not deleted, not expired), best first; memories are
-- few per user (at most memory_cap live per profile), so N, lengths and frequencies are counted.
create function memory_private.lexical_memories(p_user_id uuid, p_query text, p_limit integer default 50)
returns table (memory_id uuid, score double precision)
language sql
stable
set search_path = ''
as $$
    with terms as (
        select memory_private.query_terms(p_query) as terms
    ),
    corpus as (
        select mm.id, mm.search, mm.source_message_id
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null
            and (mm.expires_at is null or mm.expires_at > now())
    ),
    sizes as (
        select greatest(count(*), 1)::double precision as documents,
            coalesce(avg(length(c.search)), 1)::double precision as average
        from corpus as c
    ),
    matches as (
        select c.id, c.search from corpus as c, terms
        where cardinality(terms.terms) > 0 and c.search @@ memory_private.any_term(terms.terms)
    ),
    frequencies as materialized (
        select w.lexeme as term, count(*)::double precision as df
        from matches as x
        cross join lateral unnest(x.search) as w (lexeme, positions, weights)
        cross join terms
        where w.lexeme = any(terms.terms)
        group by w.lexeme
    )
    select x.id, sum(memory_private.bm25(cardinality(w.positions), length(x.search), s.average, f.df, s.documents))
    from matches as x
    cross join lateral unnest(x.search) as w (lexeme, positions, weights)
    join frequencies as f on f.term = w.lexeme
    cross join sizes as s
    group by x.id
    order by 2 desc, x.id
    limit p_limit
$$;
grant execute on function memory_private.lexical_memories(uuid, text, integer) to authenticated, service_role;

-- Why: "what did I say about X?": the user's turns ranked by BM25, and also found through the
-- memories extracted from them (which restate a turn in plainer words): a turn's score is its
-- own plus the best of its memories'.
create or replace function memory.search_messages(
    p_query text,
    p_user_id uuid default null,
    p_conversation_id uuid default null,
    p_limit integer default 20,
    p_offset integer default 0
)
returns setof memory.messages
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_depth integer;
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    v_depth := p_limit + p_offset;
    return query
    with by_text as (
        select l.message_id as id, l.score from memory_private.lexical_messages(v_user, p_query, p_conversation_id, v_depth) as l
    ),
    by_memory as (
        select mm.source_message_id as id, max(l.score) as score
        from memory_private.lexical_memories(v_user, p_query, v_depth) as l
        join memory.memories as mm on mm.id = l.memory_id
        where mm.source_message_id is not null
            and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        group by mm.source_message_id
    ),
    ranked as (
        select coalesce(t.id, v.id) as id, coalesce(t.score, 0) + coalesce(v.score, 0) as score
        from by_text as t
        full join by_memory as v on v.id = t.id
    )
    select m.*
    from ranked as r
    join memory.messages as m on m.id = r.id
    where m.user_id = v_user and (m.expires_at is null or m.expires_at > now())
    order by r.score desc, m.id
    limit p_limit offset p_offset;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
