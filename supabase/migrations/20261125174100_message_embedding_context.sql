-- A message is embedded with the end of the message before it in its conversation
-- (embedding_context_chars, 400 characters; 0 embeds it alone); editing a message drops the next
-- message's vector as well as its own.
set check_function_bodies = off;

create or replace function memory_private.embedding_wanted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
begin
    if tg_op = 'UPDATE' then
        if tg_table_name = 'messages' then
            delete from memory_private.message_embeddings as e
            where e.message_id = new.id or e.message_id = (
                select nm.id
                from memory.messages as nm
                where
                    nm.conversation_id = new.conversation_id
                    and (nm.turn_number > new.turn_number or (nm.turn_number = new.turn_number and nm.role < new.role))
                order by nm.turn_number asc, nm.role desc
                limit 1
            );
        else
            delete from memory_private.memory_embeddings as e where e.memory_id = new.id;
        end if;
    end if;
    perform memory_private.enqueue('embed', '{}', 'embed:' || new.user_id, new.user_id, null, true);
    return null;
end
$function$;

create or replace function memory_private.unembedded(p_user_id uuid, p_limit integer)
returns table (kind text, id text, content text)
language sql
stable
set search_path to ''
as $function$
    (
        select 'message', m.id::text, coalesce(right(p.content, c.chars) || e'\n', '') || m.content
        from memory.messages as m
        cross join (select (memory_private.setting('embedding_context_chars'))::integer as chars) as c
        left join lateral (
            select pm.content
            from memory.messages as pm
            where
                pm.conversation_id = m.conversation_id
                and (pm.turn_number < m.turn_number or (pm.turn_number = m.turn_number and pm.role > m.role))
            order by pm.turn_number desc, pm.role asc
            limit 1
        ) as p on c.chars > 0
        where m.user_id = p_user_id and not exists (
            select 1 from memory_private.message_embeddings as e
            where e.message_id = m.id and e.model = (select memory_private.setting('embedding_model') ->> 0)
        )
        order by m.id desc
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
    limit p_limit
$function$;


revoke all on function memory_private.embedding_wanted() from public, anon, authenticated, service_role;
revoke all on function memory_private.unembedded(uuid, integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;
grant execute on function memory_private.unembedded(uuid, integer) to service_role;

insert into memory_private.settings (key, value, description) values (
    'embedding_context_chars', '400',
    'Characters from the end of the preceding message embedded with a message (0: the message alone); '
    'rows embedded before a change keep their vectors.'
);
