-- Why: seed 000's "yung una" / "the first one": a query that names an earlier turn gets that turn.
-- The longest phrase found as whole words wins, so "the first one" is not read as "first". The
-- query's runs of one to four words are built in one pass and looked up by the phrases' key, so the
-- cost stays linear in the query's length.
create function memory_private.reference_position(p_text text)
returns integer
language plpgsql
stable
set search_path = ''
as $$
begin
    if p_text is null or p_text !~ '[[:alnum:]]' then
        return null;
    end if;
    return (
        with words as (
            select w.word, w.n
            from regexp_split_to_table(
                btrim(lower(regexp_replace(p_text, '[^[:alnum:]-]+', ' ', 'g'))), ' '
            ) with ordinality as w (word, n)
        ),
        runs as (
            select
                words.word as run1,
                words.word || ' ' || lead(words.word, 1) over o as run2,
                words.word || ' ' || lead(words.word, 1) over o || ' ' || lead(words.word, 2) over o as run3,
                words.word || ' ' || lead(words.word, 1) over o || ' ' || lead(words.word, 2) over o
                || ' ' || lead(words.word, 3) over o as run4
            from words
            window o as (order by words.n)
        )
        select r.position
        from memory.reference_phrases as r
        where r.phrase in (
            select runs.run1 from runs
            union all select runs.run2 from runs
            union all select runs.run3 from runs
            union all select runs.run4 from runs
        )
        order by length(r.phrase) desc, r.phrase
        limit 1
    );
end
$$;

revoke all on function memory_private.reference_position(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.reference_position(text) to authenticated, service_role;

-- The turn the text names, from the window; its generic plan, as plpgsql's own choice planned the
-- read again on every call.
create function memory.resolve_reference(p_conversation_id uuid, p_text text, p_max_turns integer default 10)
returns setof memory.turns
language plpgsql
stable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
    v_position integer := memory_private.reference_position(p_text);
begin
    if v_position is null then
        return;
    end if;
    return query
    select w.*
    from memory_private.turn_history(p_conversation_id, p_max_turns) as w
    order by
        case when v_position > 0 then w.turn_number end asc,
        case when v_position < 0 then w.turn_number end desc
    limit 1 offset abs(v_position) - 1;
end
$$;

revoke all on function memory.resolve_reference(uuid, text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.resolve_reference(uuid, text, integer) to authenticated, service_role;
