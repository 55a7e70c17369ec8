-- The server's refusal of a text as a row keeps it: one line (an error body's whitespace folded), at
-- most 500 characters; null for none.
create function memory_private.refusal(p_reason text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
    return left(btrim(regexp_replace(p_reason, '[[:space:]]+', ' ', 'g')), 500);
end
$$;

revoke all on function memory_private.refusal(text) from public, anon, authenticated, service_role;
grant execute on function memory_private.refusal(text) to service_role;
