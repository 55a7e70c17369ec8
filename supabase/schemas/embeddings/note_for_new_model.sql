-- Why: a new embedding model needs every message noted for a vector, and one insert of every
-- message is one long transaction on a large database (ten million rows). Instead
-- memory.set_embedding_model restarts a scan (message_scans 'embedding_model', through = the
-- lowest id noted so far) and each pass notes the next p_limit messages, newest first, so recent
-- conversations get their vectors first: the embed scan runs one before it queues users, every
-- minute and at most once a second for each embedding worker (5,000 messages, about 0.1 s: far
-- ahead of what a worker embeds in that second, and a short pause in its loop). No message is
-- missed: one written meanwhile notes itself. The scan's row goes away once it passes the oldest
-- message; a pass that finds it held by another pass returns at once. Returns how many messages
-- it noted.
create function memory_private.note_for_new_model(p_limit integer default 5000, p_restart boolean default false)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_below bigint;
    v_lowest bigint;
    v_noted integer;
begin
    if p_limit is null or p_limit < 1 then
        raise exception using errcode = '22023', message = 'limit must be a positive integer';
    end if;
    if p_restart then
        insert into memory_private.message_scans as s (name, through)
        values ('embedding_model', 9223372036854775807)
        on conflict (name) do update set through = excluded.through;
    end if;
    select s.through into v_below
    from memory_private.message_scans as s
    where s.name = 'embedding_model'
    for update skip locked;
    if v_below is null then
        return 0;
    end if;
    select min(b.id) into v_lowest
    from (select m.id from memory.messages as m where m.id < v_below order by m.id desc limit p_limit) as b;
    if v_lowest is null then
        delete from memory_private.message_scans where name = 'embedding_model';
        return 0;
    end if;
    insert into memory_private.pending_embeddings (user_id, message_id)
    select m.user_id, m.id from memory.messages as m
    where m.id >= v_lowest and m.id < v_below
    on conflict do nothing;
    get diagnostics v_noted = row_count;
    update memory_private.message_scans set through = v_lowest where name = 'embedding_model';
    return v_noted;
end
$$;

revoke all on function memory_private.note_for_new_model(integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.note_for_new_model(integer, boolean) to service_role;
