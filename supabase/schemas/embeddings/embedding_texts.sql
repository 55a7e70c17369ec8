-- The text each of a user's messages is embedded as: the message after the end of the message
-- before it in its conversation, since a turn often means little alone ("yes, in May");
-- embedding_context_chars sets how much (0: the message alone), with the text's md5 as its version.
-- An embed job's input reads it, and its finish reads it again to store only vectors of the text
-- that is still current. Bitmap scans are off, as for the history page: with statistics from
-- before a conversation grew, each message before was looked for by reading the whole
-- conversation through a bitmap and sorting it.
create function memory_private.embedding_texts(p_user_id uuid, p_message_ids bigint[])
returns table (id bigint, content text, version text)
language plpgsql
stable
set search_path = ''
set enable_bitmapscan = off
as $$
begin
    return query
    select x.id, x.content, md5(x.content)
    from (
        select m.id, coalesce(right(p.content, c.chars) || e'\n', '') || m.content as content
        from memory.messages as m
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral memory_private.message_before(m.conversation_id, m.turn_number, m.role) as p
            on c.chars > 0
        where m.id = any(p_message_ids) and m.user_id = p_user_id
    ) as x;
end
$$;

revoke all on function memory_private.embedding_texts(uuid, bigint[]) from public, anon, authenticated, service_role;
grant execute on function memory_private.embedding_texts(uuid, bigint[]) to service_role;
