-- The kit's pg_cron jobs as rows of memory_private.schedules: the retention sweep, cron history and
-- job pruning, memory archival and purge, the lease reaper, the weekly and monthly summary
-- schedulers, the embedding, extraction and summary queues, the users' vector lists, the search-term fold
-- and the memory selections' refresh. schedule_jobs() registers them.
insert into memory_private.schedules (name, schedule, command) values
('supamem-retention-sweep', '*/5 * * * *', 'call memory_private.run_retention_sweep()'),
-- pg_cron never cleans its own run log.
(
    'supamem-prune-cron-history', '17 3 * * *',
    $job$delete from cron.job_run_details
    where end_time < now() - (memory_private.setting('cron_history_retention') #>> '{}')::interval$job$
);

insert into memory_private.schedules (name, schedule, command) values
('supamem-archive-memories', '23 2 * * *', 'select memory_private.archive_stale_memories()'),
('supamem-purge-memories', '41 2 * * *', 'select memory_private.purge_deleted_memories()');

insert into memory_private.schedules (name, schedule, command) values
('supamem-reap-leases', '* * * * *', 'select memory_private.reap_expired_leases()'),
('supamem-prune-jobs', '53 * * * *', 'select memory_private.prune_finished_jobs()'),
-- Hourly, so each time zone's week and month are picked up soon after they end locally.
('supamem-weekly-summaries', '7 * * * *', 'select memory_private.enqueue_due_weekly_summaries()'),
('supamem-monthly-summaries', '37 * * * *', 'select memory_private.enqueue_due_monthly_summaries()');

insert into memory_private.schedules (name, schedule, command) values
('supamem-queue-embeddings', '* * * * *', 'select memory_private.queue_embeddings()'),
('supamem-build-vector-lists', '* * * * *', 'call memory_private.run_vector_list_builds()');

-- Workers that claim extractions or summaries queue the turns' notes themselves; these catch the rest.
insert into memory_private.schedules (name, schedule, command) values
('supamem-queue-extractions', '* * * * *', $job$call memory_private.run_note_queue('extract')$job$),
('supamem-queue-summaries', '* * * * *', $job$call memory_private.run_note_queue('summarize_conversation')$job$);

insert into memory_private.schedules (name, schedule, command) values
('supamem-fold-search-terms', '* * * * *', 'select memory_private.fold_search_terms()');

-- Memory selections whose candidates may no longer prove a selection are built again.
insert into memory_private.schedules (name, schedule, command) values
('supamem-refresh-memory-selections', '* * * * *', 'select memory_private.refresh_memory_selections()');

select memory_private.schedule_jobs();
