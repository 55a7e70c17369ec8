-- Why: a message holds up to 100,000 characters (a pasted document), and a prompt carries one to
-- eight of them: past a model's context the provider refuses the request on every attempt, and
-- short of it each job pays for the whole text. A job's input gives the model the beginning of a
-- long text, llm_text_chars at most, and says how much it left out.
create function memory_private.prompt_text(p_text text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
    v_max integer := memory_private.number_setting('llm_text_chars', 1);
begin
    if length(p_text) <= v_max then
        return p_text;
    end if;
    return left(p_text, v_max) || format(e'\n[… %s more characters not shown]', length(p_text) - v_max);
end
$$;

revoke all on function memory_private.prompt_text(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.prompt_text(text) to service_role;
