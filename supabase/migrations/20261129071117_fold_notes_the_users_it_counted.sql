-- The search-term fold notes the users due vector lists from the counts it wrote, instead of reading
-- its batch of messages a second time.
set check_function_bodies = off;

create or replace function memory_private.fold_search_terms(
    p_batch integer default 100000, p_wait interval default '00:00:01'::interval
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
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
$function$;


revoke all on function memory_private.fold_search_terms(integer, interval)
from public, anon, authenticated, service_role;
grant execute on function memory_private.fold_search_terms(integer, interval) to service_role;
