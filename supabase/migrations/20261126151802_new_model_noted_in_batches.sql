-- A new embedding model notes the messages by a scan, newest first and 5,000 a pass (before
-- each embed scan), instead of one insert of every message: on ten million messages that was one
-- long transaction.
set check_function_bodies = off;

create or replace function memory_private.note_for_new_model(
    p_limit integer default 5000, p_restart boolean default false
)
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
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
$function$;

create or replace function memory.set_embedding_model(p_model text, p_dimensions integer)
returns void
language plpgsql
set search_path to ''
as $function$
declare
    v_user uuid;
begin
    if p_model is null or p_model !~ '^[[:print:]]{1,200}$' then
        raise exception using errcode = '22023', message = 'model must be 1..200 printable characters';
    end if;
    if p_dimensions is null or p_dimensions < 1 or p_dimensions > 2000 then
        raise exception using errcode = '22023', message = 'dimensions must be 1..2000 (the HNSW limit)';
    end if;
    if memory_private.setting('embedding_model') ->> 0 = p_model
        and (memory_private.setting('embedding_dimensions'))::integer = p_dimensions then
        return;
    end if;
    perform memory_private.ensure_embedding_indexes(p_model, p_dimensions);
    update memory_private.settings set value = to_jsonb(p_model) where key = 'embedding_model';
    update memory_private.settings set value = to_jsonb(p_dimensions) where key = 'embedding_dimensions';
    -- The scan starts with the newest messages; the embed scan queues their users.
    perform memory_private.note_for_new_model(p_restart => true);
    perform memory_private.queue_embeddings();
    for v_user in
        select u.id from memory.users as u
        where exists (select 1 from memory.memories as mm where mm.user_id = u.id)
            and not exists (select 1 from memory.messages as m where m.user_id = u.id)
    loop
        perform memory_private.queue_embed(v_user);
    end loop;
end
$function$;

create or replace function memory_private.queue_embeddings()
returns integer
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_users integer;
begin
    if not memory_private.setting('job_kinds') ? 'embed' then
        return 0;
    end if;
    -- The messages of a new model not noted yet, a batch at a time.
    perform memory_private.note_for_new_model();
    with recursive noted as (
        (select n.user_id from memory_private.pending_embeddings as n order by n.user_id limit 1)
        union all
        select (
            select n.user_id from memory_private.pending_embeddings as n
            where n.user_id > d.user_id
            order by n.user_id
            limit 1
        )
        from noted as d
        where d.user_id is not null
    )
    select count(memory_private.queue_embed(d.user_id))::integer
    into v_users
    from noted as d
    where d.user_id is not null and not exists (
            select 1 from memory_private.jobs as j
            where j.kind = 'embed' and j.dedup_key = 'embed:' || d.user_id
                and (j.status in ('queued', 'running') or j.status = 'dead' and j.failed_at > now() - interval '1 hour')
        );
    return v_users;
end
$function$;


revoke all on function memory.set_embedding_model(text, integer) from public, anon, authenticated, service_role;
grant execute on function memory.set_embedding_model(text, integer) to service_role;
revoke all on function memory_private.note_for_new_model(integer, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.note_for_new_model(integer, boolean) to service_role;
revoke all on function memory_private.queue_embeddings() from public, anon, authenticated, service_role;
grant execute on function memory_private.queue_embeddings() to service_role;
