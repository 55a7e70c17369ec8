-- Why: a new memory takes its user's next number by updating the user's row, held until commit
-- (memory_private.memory_defaults). A writer that locked a memory and numbered one after it,
-- beside one that numbered a memory and then locked that one, would deadlock; so every path that
-- may write a memory takes the user's row first (remember, revise_memory, an extraction's
-- operations). It also orders a user's concurrent writers for remember's duplicate search.
create function memory_private.lock_memory_writer(p_user_id uuid)
returns void
language plpgsql
set search_path = ''
as $$
begin
    perform from memory.users as u where u.id = p_user_id for no key update;
end
$$;

revoke all on function memory_private.lock_memory_writer(uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.lock_memory_writer(uuid) to service_role;
