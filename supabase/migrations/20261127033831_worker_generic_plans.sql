-- A worker's claim and its job's input keep their generic plans: plpgsql's own choice planned
-- them again on every call, for longer than they run.
alter function memory.claim_jobs(text[], text, integer, interval, uuid[]) set plan_cache_mode = 'force_generic_plan';
alter function memory.job_input(bigint, text) set plan_cache_mode = 'force_generic_plan';
