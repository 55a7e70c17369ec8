-- One sweep batch locked up to twice what it deleted: the expired messages and the messages of
-- expired conversations were each locked up to the batch size, then one batch of the two was
-- deleted, and the rest were locked again by the next call. Expired messages now go first and the
-- messages of expired conversations only fill what is left of the batch, so every row locked is
-- deleted. (A session's messages expire with it, so the second query normally finds nothing.)
create or replace function memory.sweep_expired(p_batch_size integer default null, p_user_id uuid default null)
returns table (messages_deleted integer, conversations_deleted integer, short_term_deleted integer)
language plpgsql
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
    v_orphans integer;
begin
    if v_batch < 1 then
        raise exception using errcode = '22023', message = 'batch size must be positive';
    end if;
    with expired as (
        select m.id from memory.messages as m
        where m.expires_at <= now() and (p_user_id is null or m.user_id = p_user_id)
        limit v_batch
        for update skip locked
    )
    delete from memory.messages as m using expired where m.id = expired.id;
    get diagnostics messages_deleted = row_count;
    if messages_deleted < v_batch then
        with orphaned as (
            select m.id from memory.conversations as c
            inner join memory.messages as m on c.id = m.conversation_id
            where c.expires_at <= now() and (p_user_id is null or c.user_id = p_user_id)
            limit v_batch - messages_deleted
            for update of m skip locked
        )
        delete from memory.messages as m using orphaned where m.id = orphaned.id;
        get diagnostics v_orphans = row_count;
        messages_deleted := messages_deleted + v_orphans;
    end if;

    -- A conversation goes only once its messages have (in earlier batches), so a cascade never
    -- turns one bounded batch into an unbounded delete.
    with doomed as (
        select c.id from memory.conversations as c
        where c.expires_at <= now() and (p_user_id is null or c.user_id = p_user_id)
            and not exists (select 1 from memory.messages as m where m.conversation_id = c.id)
        limit v_batch
        for update skip locked
    )
    delete from memory.conversations as c using doomed where c.id = doomed.id;
    get diagnostics conversations_deleted = row_count;

    with doomed as (
        select s.user_id, s.key from memory.short_term_state as s
        where s.expires_at <= now() and (p_user_id is null or s.user_id = p_user_id)
        limit v_batch
        for update skip locked
    )
    delete from memory.short_term_state as s using doomed
    where s.user_id = doomed.user_id and s.key = doomed.key;
    get diagnostics short_term_deleted = row_count;
    return next;
end
$$;

revoke execute on all routines in schema memory, memory_private from public;
