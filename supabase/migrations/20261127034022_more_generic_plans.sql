-- Counting a history, resolving a reference and reinforcing memories keep their generic plans:
-- plpgsql's own choice planned each again on every call.
alter function memory.count_messages(uuid) set plan_cache_mode = 'force_generic_plan';
alter function memory.resolve_reference(uuid, text, integer) set plan_cache_mode = 'force_generic_plan';
alter function memory_private.reinforce(uuid[], numeric, uuid) set plan_cache_mode = 'force_generic_plan';
