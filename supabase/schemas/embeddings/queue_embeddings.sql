-- Queue the embed jobs of the users who wrote since the last scan (at most p_batch messages a
-- call); returns how many users. Concurrent calls do not wait: one scans, the others return 0.
create function memory_private.queue_embeddings(p_batch integer default 100000)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_from bigint;
    v_to bigint;
    v_user uuid;
    v_users integer := 0;
begin
    select q.through into v_from from memory_private.message_scans as q where q.name = 'embeddings'
    for update skip locked;
    if not found then
        return 0;
    end if;
    v_to := memory_private.next_messages(v_from, p_batch);
    if v_to is null then
        return 0;
    end if;
    for v_user in
        select distinct m.user_id from memory.messages as m where m.id > v_from and m.id <= v_to
    loop
        perform memory_private.enqueue('embed', '{}', 'embed:' || v_user, v_user, null, true);
        v_users := v_users + 1;
    end loop;
    update memory_private.message_scans set through = v_to where name = 'embeddings';
    return v_users;
end
$$;

revoke all on function memory_private.queue_embeddings(integer) from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings(integer) to service_role;

create function memory.queue_embeddings()
returns integer
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.queue_embeddings();
end
$$;

revoke all on function memory.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory.queue_embeddings() to service_role;
