-- Deleting messages drops the vector of each next message left in the conversation, which was
-- embedded with the deleted one's end, and queues the user's embed job: deleted words do not
-- live on in search.
set check_function_bodies = off;

create or replace function memory_private.context_deleted()
returns trigger
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users uuid[];
begin
    with dropped as (
        delete from memory_private.message_embeddings as e
        using old_messages as o
        cross join lateral (
            select nm.id
            from memory.messages as nm
            where
                nm.conversation_id = o.conversation_id
                and (nm.turn_number > o.turn_number or (nm.turn_number = o.turn_number and nm.role < o.role))
            order by nm.turn_number asc, nm.role desc
            limit 1
        ) as n
        where e.message_id = n.id
        returning e.user_id
    )
    select array_agg(distinct d.user_id) into v_users from dropped as d;
    perform memory_private.enqueue('embed', '{}', 'embed:' || u.id, u.id, null, true) from unnest(v_users) as u (id);
    return null;
end
$function$;

create trigger messages_context_deleted
after delete on memory.messages
referencing old table as old_messages
for each statement execute function memory_private.context_deleted();

revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
