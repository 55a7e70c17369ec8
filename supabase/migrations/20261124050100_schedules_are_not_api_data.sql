-- The kit's pg_cron jobs run their commands as the role that owns the table (a superuser
-- locally, supabase_admin's delegate on a project), so a row of memory_private.schedules is code.
-- No API role may write one: migrations (or the table owner, by hand) write them, and the
-- service role only reads them.
revoke insert, update, delete on memory_private.schedules from service_role;
