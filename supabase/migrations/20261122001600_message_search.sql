-- Searching a user's own conversation history: "what did I say about X?", and the retrieval that
-- the LoCoMo benchmark measures.

-- Why: a question rarely shares all its words with the turn that answers it, so words are OR-ed
-- (rank rewards turns that match more and rarer-weighted ones), and a turn is also found through
-- the memories extracted from it, which restate it in plainer words. Scoped to one user (and
-- optionally one conversation), so the scan is bounded by that user's messages; messages carry no
-- text index on purpose, to keep the write path lean.
create function memory.search_messages(
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
    v_query tsquery;
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset >= 0';
    end if;
    select to_tsquery('english', string_agg(quote_literal(w.lexeme), ' | '))
    into v_query
    from unnest(tsvector_to_array(to_tsvector('english', coalesce(p_query, '')))) as w (lexeme);
    if v_query is null then
        return;
    end if;
    return query
    with scored as (
        select m.id, ts_rank(to_tsvector('english', m.content), v_query, 1) as text_rank
        from memory.messages as m
        where m.user_id = v_user
            and (p_conversation_id is null or m.conversation_id = p_conversation_id)
            and (m.expires_at is null or m.expires_at > now())
    ),
    via_memories as (
        select mm.source_message_id as id, max(ts_rank(mm.search, v_query, 1)) as memory_rank
        from memory.memories as mm
        where mm.user_id = v_user and mm.source_message_id is not null and mm.deleted_at is null
            and mm.search @@ v_query
            and (p_conversation_id is null or mm.source_conversation_id = p_conversation_id)
        group by mm.source_message_id
    )
    select m.*
    from scored as s
    left join via_memories as v on v.id = s.id
    join memory.messages as m on m.id = s.id
    where s.text_rank > 0 or v.memory_rank > 0
    order by s.text_rank + coalesce(v.memory_rank, 0) desc, m.id
    limit p_limit offset p_offset;
end
$$;
grant execute on function memory.search_messages(text, uuid, uuid, integer, integer) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
