-- Why: every producer of embed work queues the same job, one per user (dedup key 'embed:<user>'),
-- and queues it again once the one before finished or died (enqueue's p_replace).
create function memory_private.queue_embed(p_user_id uuid)
returns bigint
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.enqueue('embed', '{}', 'embed:' || p_user_id, p_user_id, null, true);
end
$$;

revoke all on function memory_private.queue_embed(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embed(uuid) to service_role;
