-- The reference lookup is linear in the query's length.
--
-- Why: prompt_context and resolve_reference look for "the first one" / "yung una" in the query.
-- The lookup built its runs of one to four words by appending to an array in a loop, which
-- copies the array on every append: quadratic in the query's words (a 100,000-character query
-- took 31 s, then ran out of memory). The runs are now one pass over the words with lead(),
-- found with one hash or index probe each; the rule is unchanged (20261122000400): the longest
-- phrase found as whole words wins, ties by phrase; 1 = first shown, -1 = latest.
create or replace function memory_private.reference_position(p_text text)
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

revoke execute on all routines in schema memory, memory_private from public;
