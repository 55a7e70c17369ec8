-- The prompt's window keeps its generic plan: plpgsql's own choice re-planned it on every call
-- (the generic plan's estimate is the larger, for the same bounded range read).
alter function memory_private.turn_history(uuid, integer) set plan_cache_mode = 'force_generic_plan';
