-- Supabase Realtime streams memory.memories (seed 004's live memory hook): the table is in the
-- supabase_realtime publication, for every kind of change, and it has RLS on, which is what
-- limits each subscriber to their own rows. Nothing else of the kit is streamed.
begin;
select plan(3);

select results_eq(
    $$select schemaname::text collate "default", tablename::text collate "default" from pg_catalog.pg_publication_tables
    where pubname = 'supabase_realtime' and schemaname in ('memory', 'memory_private')$$,
    $$values ('memory', 'memories')$$,
    'memory.memories, and only it, is in the supabase_realtime publication'
);
select results_eq(
    $$select pubinsert, pubupdate, pubdelete from pg_catalog.pg_publication where pubname = 'supabase_realtime'$$,
    $$values (true, true, true)$$,
    'the publication carries inserts, updates and deletes'
);
select ok(
    (select c.relrowsecurity from pg_catalog.pg_class as c where c.oid = 'memory.memories'::regclass),
    'the streamed table has RLS on, so subscribers see only what they may read'
);

select * from finish();
rollback;
