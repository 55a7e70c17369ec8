-- A database in use, written through the kit's functions as they were after the first day's
-- migrations (20261122*): tenants and their admin, users with profiles, conversations with turns
-- (one shared with a participant), a deleted message, memories pinned, revised and forgotten,
-- summaries of every kind, the user's key-value, state and short-term rows, and the jobs the turns
-- queued, one of them finished and one dead. tests/test_upgrade.py applies the later migrations
-- on top and checks that everything is still there and works.
do $$
declare
    v_acme uuid;
    v_ana uuid := memory.user_id_for('upgrade-ana', null);
    v_ben uuid;
    v_cy uuid;
    v_ana_main uuid;
    v_ana_work uuid;
    v_ben_main uuid;
    v_cy_main uuid;
    v_garden uuid;
    v_work uuid;
    v_shared uuid;
    v_memory uuid;
    v_gone uuid;
    v_message bigint;
begin
    insert into memory.tenants (name, conversation_window) values ('Acme', 50) returning id into v_acme;
    v_ben := memory.user_id_for('upgrade-ben', v_acme);
    -- Cy signs in with Supabase Auth and administers Acme.
    insert into auth.users (id, email) values (gen_random_uuid(), 'cy@upgrade.test') returning id into v_cy;
    perform memory.register_user(v_cy, v_acme);
    insert into memory.tenant_admins (tenant_id, user_id) values (v_acme, v_cy);

    insert into memory.profiles (user_id, name, is_primary, timezone, attributes)
    values (v_ana, 'Ana', true, 'Europe/Lisbon', '{"birth_date": "1990-04-02"}') returning id into v_ana_main;
    insert into memory.profiles (user_id, name, is_primary) values (v_ana, 'Work', false) returning id into v_ana_work;
    insert into memory.profiles (user_id, tenant_id, name, is_primary) values (v_ben, v_acme, 'Ben', true)
    returning id into v_ben_main;

    v_garden := (memory.create_conversation(v_ana, 'The garden', 'chat', v_ana_main)).id;
    perform memory.add_turn(v_garden, format('Turn %s: my zucchini patch needs water', i), format('Answer %s about watering', i),
        jsonb_build_object('turn', i), p_user_id => v_ana)
    from generate_series(1, 6) as i;
    v_message := (select m.id from memory.messages as m where m.conversation_id = v_garden and m.turn_number = 2
        and m.role = 'user');
    v_work := (memory.create_conversation(v_ana, 'Quarterly plan', 'chat', v_ana_work)).id;
    perform memory.add_turn(v_work, 'The roadmap review is on Thursday', 'Noted for Thursday', p_user_id => v_ana);
    perform memory.add_turn(v_work, 'Forget what I said about Thursday', 'Done', p_user_id => v_ana);
    perform memory.delete_message((select max(m.id) from memory.messages as m where m.conversation_id = v_work));

    v_shared := (memory.create_conversation(v_ben, 'Trip planning', 'chat', v_ben_main)).id;
    insert into memory.profiles (user_id, tenant_id, name, is_primary) values (v_cy, v_acme, 'Cy', true)
    returning id into v_cy_main;
    insert into memory.participants (conversation_id, user_id, profile_id) values (v_shared, v_cy, v_cy_main);
    perform memory.add_turn(v_shared, 'Where should we stay in Porto?', 'Near Ribeira', p_user_id => v_ben);
    perform memory.add_turn(v_shared, 'I prefer somewhere quiet', 'Try Foz', p_author_id => v_cy, p_user_id => v_ben);

    perform memory.remember('Grows zucchini on a balcony', 'fact', v_ana, v_ana_main, 'garden', 0.9);
    perform memory.remember('Is vegetarian', 'preference', v_ana, v_ana_main, p_pinned => true);
    v_memory := (memory.remember('Waters the zucchini on Tuesdays', 'fact', v_ana, v_ana_main,
        p_source_message_id => v_message)).memory_id;
    perform memory.revise_memory(v_memory, 'Waters the zucchini on Thursdays', p_user_id => v_ana);
    v_gone := (memory.remember('Smokes', 'pattern', v_ana, v_ana_main)).memory_id;
    perform memory.forget(v_gone, v_ana);
    perform memory.remember('Plans a trip to Porto', 'goal', v_ben, v_ben_main, 'travel');
    perform memory.set_memory_settings(false, true, v_ana);

    insert into memory.conversation_summaries (conversation_id, user_id, profile_id, from_turn, to_turn, summary)
    values (v_garden, v_ana, v_ana_main, 1, 6, 'Ana waters her zucchini.');
    insert into memory.weekly_summaries (user_id, profile_id, iso_year, week_number, week_start_date, week_end_date,
        emotional_summary, key_themes, dominant_patterns, conversation_count)
    values (v_ana, v_ana_main, 2026, 46, '2026-11-09', '2026-11-15', 'A calm week.', '{garden}', '{routine}', 2);
    insert into memory.monthly_summaries (user_id, profile_id, year, month, emotional_summary, cognitive_summary,
        key_themes, conversation_count, weekly_summaries_used)
    values (v_ana, v_ana_main, 2026, 10, 'A busy month.', 'Planned ahead.', '{garden, work}', 4, 4);

    perform memory.kv_set('display', '{"theme": "dark"}', v_ana);
    perform memory.state_set('astro', v_ana);
    perform memory.short_term_set('draft', '{"text": "half a thought"}', interval '1 day', v_ana);

    -- The jobs the turns queued stay queued; one other finished, one died.
    insert into memory_private.jobs (kind, payload, user_id, status, attempts, max_attempts, finished_at, result)
    values ('title', jsonb_build_object('conversation_id', v_work), v_ana, 'done', 1, 5, now(), '{"title": "Plans"}');
    insert into memory_private.jobs (kind, payload, user_id, status, attempts, max_attempts, finished_at, failed_at,
        last_error)
    values ('summarize_conversation', jsonb_build_object('conversation_id', v_shared), v_ben, 'dead', 5, 5, now(), now(),
        'the model was down');
end
$$;
