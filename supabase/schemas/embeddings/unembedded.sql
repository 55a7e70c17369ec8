-- The user's rows waiting for a vector of the current model: noted messages newest first
-- (memory_private.pending_embeddings), then memories without one (a user holds at most memory_cap
-- live memories a profile, so they are looked for directly), each with the text to embed
-- (memory_private.embedding_texts for messages) and that text's md5 as its version: the job's
-- finish stores a vector only while its row's text is still that one. The text is cut at
-- embedding_max_chars (a message holds up to 100,000): servers refuse a text past their model's
-- input, where its beginning still says what it is about.
create function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text, version text)
language plpgsql
stable
set search_path = ''
as $$
declare
    v_max integer := memory_private.number_setting('embedding_max_chars', 1);
begin
    return query
    (
        select 'message', t.id::text, left(t.content, v_max), t.version
        from memory_private.embedding_texts(p_user_id, array(
            select n.message_id from memory_private.pending_embeddings as n
            where n.user_id = p_user_id
            order by n.message_id desc
            limit p_limit
        )) as t
        order by t.id desc
    )
    union all
    (
        select 'memory', mm.id::text, left(mm.content, v_max), md5(mm.content)
        from memory.memories as mm
        where mm.user_id = p_user_id and mm.deleted_at is null and not exists (
            select 1 from memory_private.memory_embeddings as e
            where e.memory_id = mm.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by mm.created_at desc, mm.id
        limit p_limit
    )
    limit p_limit;
end
$$;

revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
