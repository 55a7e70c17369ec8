-- The reference lookup in plpgsql: same rule, a cached plan, and nothing to do without words.
--
-- Why: prompt_context and resolve_reference call reference_position once per request. As an SQL
-- function it was planned again on every call and ran one correlated subquery per run of words
-- (about 250 us a call here, most of prompt_context's budget over `select 1`). plpgsql keeps the
-- lookup's plan for the session, builds the query's runs of one to four words in memory, and
-- finds them with one primary-key probe each (`phrase = any(runs)`). A query with no letter or
-- digit cannot name a turn, so it skips the lookup. The rule is unchanged (20261122000400): the
-- longest phrase found as whole words wins, ties by phrase; 1 = first shown, -1 = latest.
create or replace function memory_private.reference_position(p_text text)
returns integer
language plpgsql
stable
set search_path = ''
as $$
declare
    v_words text [];
    v_runs text [] := '{}';
    v_count integer;
begin
    if p_text is null or p_text !~ '[[:alnum:]]' then
        return null;
    end if;
    v_words := regexp_split_to_array(btrim(lower(regexp_replace(p_text, '[^[:alnum:]-]+', ' ', 'g'))), ' ');
    v_count := cardinality(v_words);
    for i in 1..v_count loop
        for k in 0..least(3, v_count - i) loop
            v_runs := v_runs || array_to_string(v_words[i:i + k], ' ');
        end loop;
    end loop;
    return (
        select r.position
        from memory.reference_phrases as r
        where r.phrase = any(v_runs)
        order by length(r.phrase) desc, r.phrase
        limit 1
    );
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
