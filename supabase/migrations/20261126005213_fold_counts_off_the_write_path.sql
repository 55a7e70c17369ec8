-- The search corpus (per user: messages and lexemes) and the term statistics are kept by the fold
-- job alone, off the write path: inserts no longer count the corpus in a statement trigger, and a
-- delete notes the folded messages it removed in memory_private.search_unfolds, which the next fold
-- takes out, instead of updating the statistics itself. Lexical search adds the messages not folded
-- yet and takes out the deleted ones not unfolded yet, as it did for term frequencies.
drop trigger if exists messages_count_search_corpus_delete on memory.messages;

drop trigger if exists messages_count_search_corpus_insert on memory.messages;

drop function if exists memory_private.count_search_corpus();

-- The corpus counted every message as it was written; it now counts what the fold has reached.
update memory_private.search_corpus as c
set documents = greatest(0, c.documents - u.documents), lexemes = greatest(0, c.lexemes - u.lexemes)
from (
    select
        m.user_id,
        count(*) as documents,
        sum(length(m.search)) as lexemes
    from memory.messages as m
    where
        m.id > (
            select f.through from memory_private.message_scans as f
            where f.name = 'search_terms'
        )
    group by m.user_id
) as u
where c.user_id = u.user_id;


create table memory_private.search_unfolds (
    id bigint generated always as identity not null,
    user_id uuid not null,
    search tsvector not null
);


alter table memory_private.search_unfolds enable row level security;

create unique index search_unfolds_pkey on memory_private.search_unfolds using btree (id);

create index search_unfolds_user_id_idx on memory_private.search_unfolds using btree (user_id);

alter table memory_private.search_unfolds
add constraint search_unfolds_pkey primary key using index search_unfolds_pkey;

alter table memory_private.search_unfolds add constraint search_unfolds_user_id_fkey foreign key (
    user_id
) references memory.users (id) on delete cascade not valid;

alter table memory_private.search_unfolds validate constraint "search_unfolds_user_id_fkey";

set check_function_bodies = off;

create or replace function memory_private.fold_search_terms(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_from bigint;
    v_to bigint;
begin
    select f.through into v_from from memory_private.message_scans as f where f.name = 'search_terms' for update;
    with gone as (
        delete from memory_private.search_unfolds returning user_id, search
    ),
    sizes as (
        update memory_private.search_corpus as c
        set documents = greatest(0, c.documents - g.documents), lexemes = greatest(0, c.lexemes - g.lexemes)
        from (
            select x.user_id, count(*) as documents, sum(length(x.search)) as lexemes from gone as x group by x.user_id
        ) as g
        where c.user_id = g.user_id
    )
    update memory_private.search_terms as s
    set documents = greatest(0, s.documents - g.documents)
    from (
        select x.user_id, w.lexeme, count(*)::integer as documents
        from gone as x
        cross join lateral unnest(tsvector_to_array(x.search)) as w (lexeme)
        group by x.user_id, w.lexeme
    ) as g
    where s.user_id = g.user_id and s.lexeme = g.lexeme;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is null then
        return 0;
    end if;
    with batch as materialized (
        select m.user_id, m.search from memory.messages as m where m.id > v_from and m.id <= v_to
    ),
    sizes as (
        insert into memory_private.search_corpus as c (user_id, documents, lexemes)
        select b.user_id, count(*), sum(length(b.search)) from batch as b group by b.user_id
        on conflict (user_id) do update
        set documents = c.documents + excluded.documents, lexemes = c.lexemes + excluded.lexemes
    )
    insert into memory_private.search_terms as s (user_id, lexeme, documents)
    select b.user_id, w.lexeme, count(*)
    from batch as b
    cross join lateral unnest(tsvector_to_array(b.search)) as w (lexeme)
    group by b.user_id, w.lexeme
    on conflict (user_id, lexeme) do update set documents = s.documents + excluded.documents;
    update memory_private.message_scans set through = v_to where name = 'search_terms';
    return (select count(*) from memory.messages as m where m.id > v_from and m.id <= v_to);
end
$function$;

create or replace function memory_private.lexical_messages(
    p_user_id uuid, p_query text, p_conversation_id uuid default null::uuid, p_limit integer default 50
)
returns table (message_id bigint, score double precision)
language plpgsql
stable rows 50
set search_path to ''
set plan_cache_mode to 'force_custom_plan'
as $function$
declare
    v_terms text[] := memory_private.query_terms(p_query);
    v_documents double precision;
    v_lexemes double precision;
    v_average double precision;
    v_folded bigint := (select f.through from memory_private.message_scans as f where f.name = 'search_terms');
    v_frequencies jsonb;
    v_rarest text[];
    v_candidates integer := (memory_private.setting('lexical_candidates'))::integer;
begin
    if v_candidates is null or v_candidates < 1 then
        raise exception using errcode = '22023', message = 'setting lexical_candidates must be a positive integer';
    end if;
    if cardinality(v_terms) = 0 then
        return;
    end if;
    -- The corpus: what the fold counted, plus the user's messages not folded yet, less the deleted
    -- ones not unfolded yet.
    select coalesce(c.documents, 0) + u.documents - d.documents, coalesce(c.lexemes, 0) + u.lexemes - d.lexemes
    into v_documents, v_lexemes
    from (
        select count(*) as documents, coalesce(sum(length(x.search)), 0) as lexemes
        from (
            select m.search from memory.messages as m
            where m.user_id = p_user_id and m.id > v_folded
            limit 20000
        ) as x
    ) as u
    cross join (
        select count(*) as documents, coalesce(sum(length(g.search)), 0) as lexemes
        from memory_private.search_unfolds as g where g.user_id = p_user_id
    ) as d
    left join memory_private.search_corpus as c on c.user_id = p_user_id;
    if v_documents < 1 then
        return;
    end if;
    v_average := v_lexemes / v_documents;
    -- Each term's frequency likewise.
    select
        jsonb_object_agg(f.term, f.df),
        array_agg(f.term order by f.df, f.term) filter (where f.running <= v_candidates or f.position = 1)
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
            ) - (
                select count(*) from memory_private.search_unfolds as g
                where g.user_id = p_user_id and g.search @@ quote_literal(t.term)::tsquery
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
        limit v_candidates
    )
    select x.id, sum(memory_private.bm25(
        cardinality(w.positions), length(x.search), v_average,
        greatest((v_frequencies ->> w.lexeme)::double precision, 1), v_documents
    ))
    from matches as x
    -- Only the query's lexemes, cut out in C (marked with weight A, then kept by weight).
    cross join lateral unnest(
        pg_catalog.ts_filter(pg_catalog.setweight(pg_catalog.setweight(x.search, 'D'), 'A', v_terms), '{a}')
    ) as w (lexeme, positions, weights)
    group by x.id
    order by 2 desc, x.id
    limit p_limit;
end
$function$;

create or replace function memory_private.unfold_search_terms()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    insert into memory_private.search_unfolds (user_id, search)
    select o.user_id, o.search
    from old_messages as o
    where o.id <= (select f.through from memory_private.message_scans as f where f.name = 'search_terms')
        and o.search is not null
        -- An erased user's statistics went with the user.
        and exists (select 1 from memory.users as u where u.id = o.user_id);
    return null;
end
$function$;

grant select on table memory_private.search_unfolds to authenticated;

grant select on table memory_private.search_unfolds to service_role;

create policy "Users read what is pending for their own statistics"
on memory_private.search_unfolds
as permissive
for select
to authenticated
using ((user_id = (select auth.uid() as uid)));


revoke all on function memory_private.fold_search_terms(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer) to service_role;
revoke all on function memory_private.lexical_messages(uuid, text, uuid, integer)
from public, anon, authenticated, service_role;
grant execute on function memory_private.lexical_messages(uuid, text, uuid, integer) to authenticated, service_role;
revoke all on function memory_private.unfold_search_terms() from public, anon, authenticated, service_role;
comment on table memory_private.search_unfolds is 'Deleted messages whose words the next search-term fold takes out of the statistics.';
