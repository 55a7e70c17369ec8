-- Why: a query's terms, bounded: its first 32 distinct lexemes (english) in the order they
-- occur, read from its first 10,000 characters. A query with no lexeme has no terms. plpgsql, not
-- sql: Postgres 15 plans a sql function's statement on every call, plpgsql once per session
-- (a generic plan, whatever the caller's plan_cache_mode).
create function memory_private.query_terms(p_query text)
returns text[]
language plpgsql
immutable
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
begin
    return (select coalesce(array_agg(t.lexeme order by t.first_position, t.lexeme), '{}')
    from (
        select w.lexeme, min(p.position) as first_position
        from unnest(to_tsvector('english'::regconfig, left(coalesce(p_query, ''), 10000))) as w (lexeme, positions, weights)
        cross join lateral unnest(w.positions) as p (position)
        group by w.lexeme
        order by min(p.position), w.lexeme
        limit 32
    ) as t);
end
$$;

revoke all on function memory_private.query_terms(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.query_terms(text) to authenticated, service_role;

-- Why: the terms OR-ed as a tsquery that matches lexemes exactly (no second stemming). plpgsql:
-- as a sql function with a SET clause it was planned on every call.
create function memory_private.any_term(p_terms text[])
returns tsquery
language plpgsql
immutable
set search_path = ''
as $$
begin
    return nullif(
        array_to_string(array(select quote_literal(t.term) from unnest(p_terms) as t (term)), ' | '), ''
    )::tsquery;
end
$$;

revoke all on function memory_private.any_term(text[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.any_term(text[]) to authenticated, service_role;
