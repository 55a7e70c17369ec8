-- The delete trigger that drops the next message's vector returns at once when the deleting
-- statement's users have no vectors, and calls enqueue only for users whose embed job is neither
-- queued nor running (for those it would change nothing): a window trim costs almost nothing
-- where embeddings are unused.
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
    -- Users without vectors (embeddings unused, or not yet embedded) have none to drop.
    if not exists (
        select 1 from memory_private.message_embeddings as e
        where e.user_id in (select o.user_id from old_messages as o)
    ) then
        return null;
    end if;
    -- Each deleted message's next one, looked for only up to the next deleted message: a run of
    -- deleted messages (a sweep, a trim) is read once, not once per message.
    with deleted as (
        select o.conversation_id, o.turn_number, o.role,
            lead(o.turn_number) over w as next_turn, lead(o.role) over w as next_role
        from old_messages as o
        window w as (partition by o.conversation_id order by o.turn_number, o.role desc)
    ),
    dropped as (
        delete from memory_private.message_embeddings as e
        using deleted as d
        cross join lateral memory_private.message_after(
            d.conversation_id, d.turn_number, d.role, d.next_turn, d.next_role
        ) as n
        where e.message_id = n.id
        returning e.user_id
    )
    select array_agg(distinct d.user_id) into v_users from dropped as d;
    -- A user whose embed job is queued or running needs no call (enqueue would leave it as it is).
    perform memory_private.enqueue('embed', '{}', 'embed:' || u.id, u.id, null, true)
    from unnest(v_users) as u (id)
    where not exists (
        select 1 from memory_private.jobs as j
        where j.kind = 'embed' and j.dedup_key = 'embed:' || u.id and j.status in ('queued', 'running')
    );
    return null;
end
$function$;


revoke all on function memory_private.context_deleted() from public, anon, authenticated, service_role;
