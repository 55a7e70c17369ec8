-- Why: seed 004's "Export memory archive (all fields, for portability)": every memory of the
-- user with every column, the profiles they belong to and the user's memory settings, as one
-- JSON document.
create function memory.export_memories(p_user_id uuid default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
begin
    return jsonb_build_object(
        'format', 'supamem.memories',
        'version', 1,
        'user_id', v_user,
        'exported_at', now(),
        'settings', (
            select jsonb_build_object('memory_paused', u.memory_paused, 'long_term_opt_in', u.long_term_opt_in)
            from memory.users as u where u.id = v_user
        ),
        'profiles', coalesce((
            select jsonb_agg(to_jsonb(p) order by p.created_at, p.id)
            from memory.profiles as p where p.user_id = v_user
        ), '[]'),
        'memories', coalesce((
            select jsonb_agg(to_jsonb(m) - 'search' order by m.created_at, m.id)
            from memory.memories as m where m.user_id = v_user
        ), '[]')
    );
end
$$;

revoke all on function memory.export_memories(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.export_memories(uuid) to authenticated, service_role;
