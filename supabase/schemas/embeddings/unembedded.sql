-- The user's rows waiting for a vector of the current model: noted messages newest first
-- (memory_private.pending_embeddings), then memories without one (a user holds at most memory_cap
-- live memories a profile, so they are looked for directly). A message is embedded with the end of
-- the message before it in its conversation, since a turn often means little alone ("yes, in
-- May"); embedding_context_chars sets how much (0: none).
create function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text)
language plpgsql
stable
set search_path = ''
as $$
begin
    return query
    (
        select 'message', m.id::text, coalesce(right(p.content, c.chars) || e'\n', '') || m.content
        from memory_private.pending_embeddings as n
        join memory.messages as m on m.id = n.message_id
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral memory_private.message_before(m.conversation_id, m.turn_number, m.role) as p
            on c.chars > 0
        where n.user_id = p_user_id
        order by n.message_id desc
        limit p_limit
    )
    union all
    (
        select 'memory', mm.id::text, mm.content
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
