-- Why: a message's id is drawn when its insert runs, not when it commits, so a fold that passed the
-- newest committed id could pass a lower one still uncommitted, and that message would never get
-- its postings. A fold first waits for the transactions writing messages right now (the ones that
-- took the table's write lock; a later writer draws a later id), at most p_wait, and says whether
-- they all ended. Writers never wait for it.
create function memory_private.await_message_writers(p_wait interval)
returns boolean
language plpgsql
volatile
set search_path = ''
as $$
declare
    v_writers text[] := array(
        select l.virtualtransaction from pg_catalog.pg_locks as l
        where l.locktype = 'relation' and l.relation = 'memory.messages'::regclass
            and l.mode = 'RowExclusiveLock' and l.pid is distinct from pg_catalog.pg_backend_pid()
    );
    v_until timestamptz := pg_catalog.clock_timestamp() + p_wait;
begin
    -- A transaction holds locks under its virtual id until it ends.
    while exists (select 1 from pg_catalog.pg_locks as l where l.virtualtransaction = any(v_writers)) loop
        if pg_catalog.clock_timestamp() >= v_until then
            return false;
        end if;
        perform pg_catalog.pg_sleep(0.002);
    end loop;
    return true;
end
$$;

revoke all on function memory_private.await_message_writers(interval) from public, anon, authenticated, service_role;
