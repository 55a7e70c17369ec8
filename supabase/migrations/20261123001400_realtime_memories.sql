-- Seed 004's memory hook shows memories live ("real-time updates via Supabase subscriptions"):
-- Supabase Realtime streams the changes of the tables in the `supabase_realtime` publication,
-- each change checked against the subscriber's RLS, so a signed-in user receives their own
-- memories' inserts, updates and soft deletes and nobody else's. A database without Realtime
-- (no such publication) is left as it is; running the migration again changes nothing.
do $$
begin
    if exists (select 1 from pg_catalog.pg_publication where pubname = 'supabase_realtime')
        and not exists (
            select 1 from pg_catalog.pg_publication_tables
            where pubname = 'supabase_realtime' and schemaname = 'memory' and tablename = 'memories'
        ) then
        alter publication supabase_realtime add table memory.memories;
    end if;
end
$$;
