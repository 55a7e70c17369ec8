-- Choosing the memories that go into a prompt, and the one-round-trip prompt context.

insert into memory_private.settings (key, value, description) values
('memory_token_budget', '500', 'Default token budget of the memory block in a prompt (seed 004: 400-600).'),
('memory_select_limit', '10', 'Most memories a prompt gets (seed 004''s hard limit).');

-- Why: seed 004 asks to track which memories were used: last referenced, reference count, and the
-- ids on the assistant message they served. A use is counted once per answer: ids already on the
-- message are not counted again. Signed-in callers can only mark their own memories.
create function memory_private.record_selection(p_memory_ids uuid[], p_message_id bigint)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_known uuid[];
begin
    if p_message_id is null then
        perform memory_private.reinforce(p_memory_ids);
        return;
    end if;
    select msg.used_memory_ids into v_known
    from memory.messages as msg
    where msg.id = p_message_id and msg.role = 'assistant'
        and msg.user_id = coalesce((select auth.uid()), msg.user_id)
    for update;
    if not found then
        return;
    end if;
    perform memory_private.reinforce(array(select unnest(p_memory_ids) except select unnest(v_known)));
    update memory.messages as msg
    set used_memory_ids = array(
        select u.id from unnest(v_known || p_memory_ids) with ordinality as u (id, n) group by u.id order by min(u.n)
    )
    where msg.id = p_message_id;
end
$$;
grant execute on function memory_private.record_selection(uuid[], bigint) to authenticated, service_role;

create type memory.selected_memory as (
    id uuid,
    content text,
    type text,
    category text,
    confidence numeric,
    pinned boolean,
    reference_count integer,
    last_referenced_at timestamptz,
    score numeric,
    tokens integer
);
grant usage on type memory.selected_memory to authenticated, service_role;

-- Why: seed 004's selection: live memories of one user and profile, pinned first, then by score
-- (optionally lifted by relevance to the current query), at most p_limit and within a token
-- budget (about four characters a token, plus the bullet). Choosing is a read; a use is recorded
-- when the memories are attached to the answer they served (add_turn / add_message with
-- p_used_memory_ids, or p_message_id here), or now with p_record.
create function memory.select_memories(
    p_user_id uuid default null,
    p_profile_id uuid default null,
    p_query text default null,
    p_limit integer default null,
    p_token_budget integer default null,
    p_message_id bigint default null,
    p_record boolean default false
)
returns setof memory.selected_memory
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_profile uuid := coalesce(
        p_profile_id, (select p.id from memory.profiles as p where p.user_id = v_user and p.is_primary)
    );
    v_limit integer := coalesce(p_limit, (memory_private.setting('memory_select_limit'))::integer);
    v_budget integer := coalesce(p_token_budget, (memory_private.setting('memory_token_budget'))::integer);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
    v_chosen memory.selected_memory [];
begin
    if v_limit < 1 or v_limit > 50 or v_budget < 1 then
        raise exception using errcode = '22023', message = 'limit must be 1..50 and the token budget positive';
    end if;
    with candidates as (
        select m.*,
            memory_private.memory_score(
                t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
            ) * (1 + case when v_query is null then 0 else greatest(
                ts_rank_cd(m.search, v_query)::numeric, extensions.word_similarity(p_query, m.content)::numeric
            ) end) as final_score,
            ceil(length(m.content) / 4.0)::integer + 2 as cost
        from memory.memories as m
        join memory.memory_types as t on t.type = m.type
        where m.user_id = v_user and m.profile_id = v_profile
            and m.active and not m.archived and m.deleted_at is null
            and (m.expires_at is null or m.expires_at > now())
    ),
    ranked as (
        select c.*, row_number() over w as position, sum(c.cost) over w as spent
        from candidates as c
        window w as (order by c.pinned desc, c.final_score desc, c.id)
    )
    select coalesce(array_agg(row(
        r.id, r.content, r.type, r.category, r.confidence, r.pinned, r.reference_count,
        r.last_referenced_at, round(r.final_score, 4), r.cost
    )::memory.selected_memory order by r.position), '{}')
    into v_chosen
    from ranked as r
    where r.position <= v_limit and r.spent <= v_budget;
    if (p_record or p_message_id is not null) and cardinality(v_chosen) > 0 then
        perform memory_private.record_selection(array(select c.id from unnest(v_chosen) as c), p_message_id);
    end if;
    return query select * from unnest(v_chosen);
end
$$;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean)
to authenticated, service_role;

-- Why: the one-round-trip context hands the app the memory ids it chose; when the answer is stored
-- with them (add_turn / add_message p_used_memory_ids), that is their use. Counting it here, on
-- the write, keeps the context read read-only (it can run on a read replica).
create function memory_private.record_used_memories()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
    perform memory_private.reinforce(new.used_memory_ids, null, new.user_id);
    return null;
end
$$;

create trigger messages_record_used_memories
after insert on memory.messages
for each row when (new.role = 'assistant' and cardinality(new.used_memory_ids) > 0)
execute function memory_private.record_used_memories();

-- Why: ids returned to the app are attached to the assistant message once it exists.
create function memory.mark_memories_used(p_message_id bigint, p_memory_ids uuid[])
returns void
language sql
set search_path = ''
as $$
    select memory_private.record_selection(p_memory_ids, p_message_id)
$$;
grant execute on function memory.mark_memories_used(bigint, uuid[]) to authenticated, service_role;

revoke execute on all routines in schema memory, memory_private from public;
