-- Seed 004's Undo on "This was saved": memory.undo_memory forgets the memory and, when it was a
-- new version of another, makes that version stand again.
set check_function_bodies = off;

create or replace function memory.undo_memory(p_memory_id uuid, p_user_id uuid default null::uuid)
returns memory.memories
language plpgsql
set search_path to ''
as $function$
begin
    return memory_private.undo_memory(p_memory_id, p_user_id);
end
$function$;

create or replace function memory_private.undo_memory(p_memory_id uuid, p_user_id uuid)
returns memory.memories
language plpgsql
security definer
set search_path to ''
as $function$
declare
    v_scope uuid := memory_private.memory_scope();
    v_row memory.memories;
    v_previous memory.memories;
begin
    select m.* into v_row from memory.memories as m
    where m.id = p_memory_id and m.deleted_at is null and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found or already deleted';
    end if;
    select m.* into v_previous from memory.memories as m
    where m.superseded_by = v_row.id and m.user_id = v_row.user_id and m.deleted_at is null
    for update;
    if not found then
        return memory_private.forget(p_memory_id, p_user_id);
    end if;
    update memory.memories as m set superseded_by = null, active = true where m.id = v_previous.id;
    update memory.memories as m set superseded_by = v_previous.id, active = false, deleted_at = now()
    where m.id = v_row.id;
    perform memory_private.enforce_memory_cap(v_previous.user_id, v_previous.profile_id);
    select m.* into v_previous from memory.memories as m where m.id = v_previous.id;
    return v_previous;
end
$function$;


revoke all on function memory.undo_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory.undo_memory(uuid, uuid) to authenticated, service_role;
revoke all on function memory_private.undo_memory(uuid, uuid) from public, anon, authenticated, service_role;
grant execute on function memory_private.undo_memory(uuid, uuid) to authenticated, service_role;
