-- The history page keeps its generic plan: plpgsql's own choice re-planned it on every call.
alter function memory_private.history(uuid, integer, integer, boolean) set plan_cache_mode = 'force_generic_plan';
