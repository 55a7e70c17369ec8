-- A sweep batch is at most the batch size per table. The first version deleted up to one batch of
-- expired messages plus one batch of messages of expired conversations, so "batch size" meant
-- twice that for messages; callers and pg_cron size their locks and WAL by the setting.

create or replace function memory.sweep_expired(p_batch_size integer default null, p_user_id uuid default null)
returns table (messages_deleted integer, conversations_deleted integer, short_term_deleted integer)
language plpgsql
set search_path = ''
as $$
declare
    v_batch integer := coalesce(p_batch_size, (memory_private.setting('sweep_batch_size'))::integer);
begin
    if v_batch < 1 then
        raise exception using errcode = '22023', message = 'batch size must be positive';
    end if;
    -- Messages go first: expired ones, and those of an expired conversation (which normally
    -- expired with it); one batch of the two together.
    with expired as (
        select m.id from memory.messages as m
        where m.expires_at <= now() and (p_user_id is null or m.user_id = p_user_id)
        limit v_batch
        for update skip locked
    ),
    orphaned as (
        select m.id from memory.conversations as c
        inner join memory.messages as m on c.id = m.conversation_id
        where c.expires_at <= now() and (p_user_id is null or c.user_id = p_user_id)
        limit v_batch
        for update of m skip locked
    ),
    batch as (
        select e.id from expired as e
        union
        select o.id from orphaned as o
        limit v_batch
    )
    delete from memory.messages as m using batch where m.id = batch.id;
    get diagnostics messages_deleted = row_count;

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
