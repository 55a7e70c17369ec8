-- Why: seed 004's memory hook shows memories live through Supabase Realtime, which streams the
-- tables in the `supabase_realtime` publication and checks each change against the subscriber's
-- RLS, so a user receives only their own memories' changes. Without that publication (no Realtime)
-- nothing is changed, and running it again adds nothing.
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
