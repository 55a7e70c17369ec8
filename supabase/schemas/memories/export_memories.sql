-- Why: seed 004's "Export memory archive (all fields, for portability)": every memory of the
-- user with every column, the profiles they belong to, the user's memory settings and their
-- weekly and monthly summaries and year-over-year comparisons, as one JSON document.
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
        ), '[]'),
        -- What the user's memory was summarised into, for the record: an import leaves them out
        -- (they are made again from the conversations, by the schedulers or a backfill).
        'weekly_summaries', coalesce((
            select jsonb_agg(to_jsonb(w) order by w.week_start_date, w.id)
            from memory.weekly_summaries as w where w.user_id = v_user
        ), '[]'),
        'monthly_summaries', coalesce((
            select jsonb_agg(to_jsonb(m) order by m.year, m.month, m.id)
            from memory.monthly_summaries as m where m.user_id = v_user
        ), '[]'),
        'yearly_comparisons', coalesce((
            select jsonb_agg(to_jsonb(y) order by y.year, y.month, y.id)
            from memory.yearly_comparisons as y where y.user_id = v_user
        ), '[]')
    );
end
$$;

revoke all on function memory.export_memories(uuid) from public, anon, authenticated, service_role;
grant execute on function memory.export_memories(uuid) to authenticated, service_role;
