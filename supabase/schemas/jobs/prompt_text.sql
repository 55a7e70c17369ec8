-- Why: a message holds up to 100,000 characters (a pasted document), and a prompt carries several:
-- one to eight in a job's input, a window of turns in a chat's. Past a model's context the provider
-- refuses the request on every attempt (a chat's conversation stays unusable while the text is in
-- its window), and short of it each request pays for the whole text. A prompt gives the model the
-- beginning of a long text, p_max characters at most (the caller reads llm_text_chars once), and
-- says how much it left out. SQL with no SET clause, so Postgres inlines it into its callers: pure
-- text functions of its arguments, each named in pg_catalog (functions_set_search_path lists it),
-- and only immutable ones (format() is stable, and would keep it from being inlined).
create function memory_private.prompt_text(p_text text, p_max integer)
returns text
language sql
immutable
return case
    when pg_catalog.length(p_text) <= p_max then p_text
    else
        pg_catalog.left(p_text, p_max)
        || e'\n[… ' || (pg_catalog.length(p_text) - p_max)::text || ' more characters not shown]'
end;

revoke all on function memory_private.prompt_text(text, integer) from public, anon, authenticated, service_role;
-- A signed-in user's prompt_context inlines it, which needs the right to execute it.
grant execute on function memory_private.prompt_text(text, integer) to authenticated, service_role;
