-- One definition of a neighbour's place among its list (memory_private.nearness), used by both
-- searches' fusion and the selection's lift; the selection counts its lexical side by the query's
-- terms (memory_private.query_terms); a monthly summary's weeks are their range alone, which is
-- exactly the rule that their Thursday falls in the month.

set check_function_bodies = off;

create or replace function memory_private.nearness(
    p_distance double precision, p_nearest double precision, p_farthest double precision
)
returns double precision
language sql
immutable parallel safe
as $function$
    select coalesce((p_farthest - p_distance) / nullif(p_farthest - p_nearest, 0), 1)
$function$;

create or replace function memory.job_input(p_job_id bigint, p_worker text)
returns jsonb
language plpgsql
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_job memory_private.jobs := memory_private.hold_lease(p_job_id, p_worker);
    v_payload jsonb := v_job.payload;
    v_profile memory.profiles;
    v_message memory.messages;
    v_retry_at timestamptz;
begin
    if v_job.kind = 'extract' then
        v_retry_at := memory_private.extraction_slot(v_job.user_id, v_job.id);
        if v_retry_at is not null then
            update memory_private.jobs as j
            set status = 'queued', attempts = j.attempts - 1, leased_until = null, worker = null, started_at = null,
                run_after = v_retry_at
            where j.id = p_job_id;
            return jsonb_build_object(
                'kind', v_job.kind,
                'deferred', jsonb_build_object(
                    'run_after', v_retry_at,
                    'reason', format(
                        'rate limit: %s extractions per user per minute', memory_private.setting('extraction_rate_limit')
                    )
                )
            );
        end if;
    end if;
    case v_job.kind
        when 'extract' then
            select m.* into v_message from memory.messages as m where m.id = (v_payload ->> 'source_message_id')::bigint;
            select p.* into v_profile from memory.profiles as p
            where p.id = memory_private.memory_profile(v_job.user_id, v_message.id, null);
            return jsonb_build_object(
                'kind', v_job.kind,
                'user_id', v_job.user_id,
                'source_message_id', v_message.id,
                'mode', (select c.mode from memory.conversations as c where c.id = v_message.conversation_id),
                'user_message', v_message.content,
                'assistant_message', (
                    select a.content from memory.messages as a
                    where a.conversation_id = v_message.conversation_id and a.turn_number = v_message.turn_number
                        and a.role = 'assistant'
                ),
                -- Who the memories are about (seed 004: the profile's data, such as a birth chart, in
                -- its attributes), so a memory can say how it relates to them.
                'profile', memory_private.profile_document(v_profile),
                -- The nearest live memories, so the model can update or delete instead of adding.
                'existing_memories', coalesce((
                    select jsonb_agg(jsonb_build_object('id', n.id, 'content', n.content, 'type', n.type))
                    from (
                        select m.id, m.content, m.type
                        from memory.memories as m
                        where m.user_id = v_job.user_id
                            and m.profile_id = v_profile.id
                            and m.active and not m.archived and m.deleted_at is null
                        order by extensions.similarity(m.content, v_message.content) desc, m.id
                        limit 5
                    ) as n
                ), '[]')
            );
        when 'summarize_conversation', 'title' then
            return jsonb_build_object(
                'kind', v_job.kind,
                'conversation_id', v_payload ->> 'conversation_id',
                'turns', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'turn_number', t.turn_number, 'user', t.user_content, 'assistant', t.assistant_content
                    ) order by t.turn_number)
                    from memory.turns as t
                    where t.conversation_id = (v_payload ->> 'conversation_id')::uuid
                        and t.turn_number between coalesce((v_payload ->> 'from_turn')::integer, 1)
                        and coalesce((v_payload ->> 'to_turn')::integer, 1)
                ), '[]')
            );
        when 'summarize_week' then
            select p.* into v_profile from memory.profiles as p where p.id = (v_payload ->> 'profile_id')::uuid;
            return jsonb_build_object(
                'kind', v_job.kind,
                'week_start', v_payload ->> 'week_start',
                'time_zone', v_profile.timezone,
                'summaries', coalesce((
                    select jsonb_agg(s.summary order by s.created_at)
                    from memory.conversation_summaries as s
                    -- The week's range in the profile's zone, so the profile's index reads only that week.
                    where s.profile_id = v_profile.id
                        and s.created_at >= ((v_payload ->> 'week_start')::date::timestamp at time zone v_profile.timezone)
                        and s.created_at < (((v_payload ->> 'week_start')::date + 7)::timestamp at time zone v_profile.timezone)
                        and memory_private.local_week_start(s.created_at, v_profile.timezone)
                        = (v_payload ->> 'week_start')::date
                ), '[]')
            );
        when 'summarize_month' then
            select p.* into v_profile from memory.profiles as p where p.id = (v_payload ->> 'profile_id')::uuid;
            return jsonb_build_object(
                'kind', v_job.kind,
                'month_start', v_payload ->> 'month_start',
                'profile', memory_private.profile_document(v_profile),
                'weekly_summaries', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'week_start', w.week_start_date, 'emotional_summary', w.emotional_summary,
                        'key_themes', w.key_themes, 'dominant_patterns', w.dominant_patterns
                    ) order by w.week_start_date)
                    from memory.weekly_summaries as w
                    -- The weeks whose Thursday is in the month: starting from 3 days before it to 4
                    -- before the next, a range of the profile's index.
                    where w.profile_id = (v_payload ->> 'profile_id')::uuid
                        and w.week_start_date between (v_payload ->> 'month_start')::date - 3
                        and ((v_payload ->> 'month_start')::date + interval '1 month')::date - 4
                ), '[]'),
                -- The month's weeks (their Thursday in it), each job found by its key, one probe a
                -- Monday: by status and payload this read every user's jobs.
                'weeks_pending', (
                    select count(*)
                    from generate_series(
                        (v_payload ->> 'month_start')::date - 3,
                        ((v_payload ->> 'month_start')::date + interval '1 month')::date - 4,
                        interval '1 day'
                    ) as d
                    cross join lateral (
                        select 1 from memory_private.jobs as j
                        where j.kind = 'summarize_week'
                            and j.dedup_key = format('week:%s:%s', v_payload ->> 'profile_id', d::date)
                            and j.status in ('queued', 'running')
                        limit 1
                    ) as j
                    where extract(isodow from d) = 1
                )
            );
        when 'compare_year' then
            return jsonb_build_object(
                'kind', v_job.kind,
                'year', v_payload -> 'year',
                'month', v_payload -> 'month',
                'months', coalesce((
                    select jsonb_agg(jsonb_build_object(
                        'year', m.year, 'emotional_summary', m.emotional_summary,
                        'cognitive_summary', m.cognitive_summary, 'key_themes', m.key_themes
                    ) order by m.year)
                    from memory.monthly_summaries as m
                    where m.profile_id = (v_payload ->> 'profile_id')::uuid and m.month = (v_payload ->> 'month')::integer
                        and m.year in ((v_payload ->> 'year')::integer - 1, (v_payload ->> 'year')::integer)
                ), '[]')
            );
        else
            raise exception using errcode = '22023', message = format('unknown job kind %L', v_job.kind);
    end case;
end
$function$;

create or replace function memory.search_memories(
    p_query text default null::text,
    p_user_id uuid default null::uuid,
    p_type text default null::text,
    p_category text default null::text,
    p_profile_id uuid default null::uuid,
    p_conversation_id uuid default null::uuid,
    p_created_from timestamp with time zone default null::timestamp with time zone,
    p_created_to timestamp with time zone default null::timestamp with time zone,
    p_status text default 'active'::text,
    p_limit integer default 20,
    p_offset integer default 0,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.memories
language plpgsql
stable
set search_path to ''
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
    -- The vector side only ranks a text query.
    v_embedding extensions.vector := case when p_query is not null then p_query_embedding end;
begin
    if p_status is null or p_status not in ('active', 'archived', 'deleted', 'superseded', 'all') then
        raise exception using errcode = '22023', message = format('unknown status %L', p_status),
            hint = 'status is one of active, archived, deleted, superseded, all';
    end if;
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 100000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..100000';
    end if;
    if length(p_query) > 1000 then
        raise exception using errcode = '22023', message = 'a memory search is at most 1,000 characters';
    end if;
    return query
    with lexical as (
        select l.memory_id,
            coalesce(l.score / nullif(max(l.score) over (), 0), 1) as score
        from memory_private.lexical_memories(v_user, p_query, 1000) as l
    ),
    semantic as (
        select n.memory_id, 1 - n.distance as similarity,
            memory_private.nearness(n.distance, min(n.distance) over (), max(n.distance) over ()) as score
        from memory_private.vector_memories(v_user, v_embedding, 100) as n
    ),
    -- Fused once: under a nested loop over the user's memories (the generic plan's choice) the ranks
    -- were computed again for every memory, about a tenth of a millisecond each.
    fused as materialized (
        -- A search filters: a memory that only the vector side finds must be similar enough.
        select coalesce(l.memory_id, s.memory_id) as memory_id,
            coalesce(s.similarity >= (memory_private.setting('memory_search_min_similarity'))::double precision, false)
            as near,
            coalesce(l.score, 0) + coalesce(s.score, 0) as score
        from lexical as l
        full join semantic as s on s.memory_id = l.memory_id
    )
    select m.*
    from memory.memories as m
    left join fused as r on r.memory_id = m.id
    where m.user_id = v_user
        and (
            p_query is null or m.search @@ v_query or extensions.word_similarity(p_query, m.content) >= 0.4
            or r.near
        )
        and (p_type is null or m.type = p_type)
        and (p_category is null or m.category = p_category)
        and (p_profile_id is null or m.profile_id = p_profile_id)
        and (p_conversation_id is null or m.source_conversation_id = p_conversation_id)
        and (p_created_from is null or m.created_at >= p_created_from)
        and (p_created_to is null or m.created_at < p_created_to)
        and case p_status
            when 'active' then m.active and not m.archived and (m.expires_at is null or m.expires_at > now())
            when 'archived' then m.archived and m.deleted_at is null
            when 'deleted' then m.deleted_at is not null
            when 'superseded' then m.superseded_by is not null
            else true
        end
    order by
        r.score desc nulls last,
        case when p_query is not null then extensions.word_similarity(p_query, m.content) else 0 end desc,
        m.created_at desc,
        m.id
    limit p_limit offset p_offset;
end
$function$;

create or replace function memory.select_memories(
    p_user_id uuid default null::uuid,
    p_profile_id uuid default null::uuid,
    p_query text default null::text,
    p_limit integer default null::integer,
    p_token_budget integer default null::integer,
    p_message_id bigint default null::bigint,
    p_record boolean default false,
    p_query_embedding extensions.vector default null::extensions.vector
)
returns setof memory.selected_memory
language plpgsql
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_profile uuid := coalesce(
        p_profile_id, (select p.id from memory.profiles as p where p.user_id = v_user and p.is_primary)
    );
    v_limit integer := coalesce(p_limit, (memory_private.setting('memory_select_limit'))::integer);
    v_budget integer := coalesce(p_token_budget, (memory_private.setting('memory_token_budget'))::integer);
    v_chosen memory.selected_memory [];
    v_lifted uuid [] := '{}';
    -- Each lifted memory's lift, by id: looked up per scored memory, where joining the lifts as a
    -- set (their count unknown to the plan) compared every scored memory with every lift.
    v_lifts jsonb := '{}';
    v_pool uuid [];
    v_bound numeric;
    v_bound_id uuid;
    v_best memory.selected_memory [];
    v_keep integer;
    v_count integer;
    v_last numeric;
    v_last_id uuid;
    v_all_pinned boolean;
    -- The sides the query has: its words (a text of stop words has none) and its embedding.
    v_sides integer;
begin
    if v_limit < 1 or v_limit > 50 or v_budget < 1 then
        raise exception using errcode = '22023', message = 'limit must be 1..50 and the token budget positive';
    end if;
    -- The query's lift, only when there is a query: joining empty retrieval sides still cost every
    -- memory of the profile a pass through two hash joins.
    if p_query is not null or p_query_embedding is not null then
        v_sides := (cardinality(memory_private.query_terms(p_query)) > 0)::integer
            + (p_query_embedding is not null)::integer;
        select coalesce(array_agg(x.memory_id), '{}'), coalesce(jsonb_object_agg(x.memory_id, x.lift), '{}')
        into v_lifted, v_lifts
        from (
            select
                coalesce(l.memory_id, n.memory_id) as memory_id,
                ((coalesce(l.relevance, 0) + coalesce(n.nearness, 0)) / v_sides)::numeric as lift
            from (
                select l.memory_id, l.relevance
                from memory_private.lexical_memories(v_user, p_query, null, v_profile) as l
                where p_query is not null
            ) as l
            full join (
                -- The memories nearest the query's meaning.
                select n.memory_id,
                    memory_private.nearness(n.distance, min(n.distance) over (), max(n.distance) over ()) as nearness
                from memory_private.vector_memories(v_user, p_query_embedding, v_limit) as n
                where p_query_embedding is not null
            ) as n on n.memory_id = l.memory_id
        ) as x;
    end if;
    select s.candidates || array(
        select distinct n.memory_id from memory_private.memory_selection_notes as n
        where n.profile_id = v_profile and n.memory_id is not null
    ), s.bound, s.bound_id
    into v_pool, v_bound, v_bound_id
    from memory_private.memory_selections as s
    where s.profile_id = v_profile and s.bound is distinct from 'Infinity';
    loop
        if v_pool is null then
            v_pool := array(
                select m.id from memory.memories as m
                where m.user_id = v_user and m.profile_id = v_profile
                    and m.active and not m.archived and m.deleted_at is null
            );
            v_bound := null;
        end if;
        -- Each memory of the pool and of the lift once, read by id (`id = any`, an index condition
        -- whatever the statistics: joined to the pool as a set, a small table's generic plan scanned
        -- every user's memories for each call), with its lift: the pool's size is the cost.
        with scored as (
            select m.id, m.content, m.type, m.category, m.confidence, m.pinned, m.reference_count,
                m.last_referenced_at,
                memory_private.memory_score(
                    t.weight, m.confidence, m.last_referenced_at, m.created_at, m.reference_count, now()
                ) * (1 + coalesce((v_lifts ->> m.id::text)::numeric, 0)) as final_score,
                ceil(length(m.content) / 4.0)::integer + 2 as cost
            from memory.memories as m
            join memory.memory_types as t on t.type = m.type
            -- The owner and profile are filters, never index conditions: the statistics of an
            -- ordinary profile would have the planner read all of a large one's memories instead.
            where m.id = any(v_pool || v_lifted)
                and m.user_id is not distinct from v_user and m.profile_id is not distinct from v_profile
                and m.active and not m.archived and m.deleted_at is null
                and (m.expires_at is null or m.expires_at > now())
        ),
        -- The best v_limit first (a top-N sort), then the budget over just those.
        best as (
            select c.* from scored as c order by c.pinned desc, c.final_score desc, c.id limit v_limit
        ),
        ranked as (
            select c.*, row_number() over w as position, sum(c.cost) over w as spent
            from best as c
            window w as (order by c.pinned desc, c.final_score desc, c.id)
        )
        select coalesce(array_agg(row(
            r.id, r.content, r.type, r.category, r.confidence, r.pinned, r.reference_count,
            r.last_referenced_at, round(r.final_score, 4), r.cost
        )::memory.selected_memory order by r.position), '{}'),
            count(*) filter (where r.spent <= v_budget), count(*),
            (array_agg(r.final_score order by r.position desc))[1], (array_agg(r.id order by r.position desc))[1],
            coalesce(bool_and(r.pinned), true)
        into v_best, v_keep, v_count, v_last, v_last_id, v_all_pinned
        from ranked as r;
        -- Proven when no memory left out can outrank the last chosen: the pool was every live
        -- memory, or the last chosen is pinned or ranks before the bound of all the others.
        exit when v_bound is null or (
            v_count = v_limit and (v_all_pinned or v_last > v_bound or (v_last = v_bound and v_last_id < v_bound_id))
        );
        v_pool := null;
    end loop;
    v_chosen := v_best[1:v_keep];
    if (p_record or p_message_id is not null) and cardinality(v_chosen) > 0 then
        perform memory_private.record_selection(array(select c.id from unnest(v_chosen) as c), p_message_id);
    end if;
    return query select * from unnest(v_chosen);
end
$function$;

create or replace function memory_private.search_messages(
    p_query text,
    p_user_id uuid,
    p_conversation_id uuid,
    p_limit integer,
    p_offset integer,
    p_query_embedding extensions.vector
)
returns setof memory.messages
language plpgsql
stable security definer
set search_path to ''
set plan_cache_mode to 'force_generic_plan'
as $function$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_depth integer;
    v_ids bigint[];
    -- Null for the user themselves and trusted callers; an admin's tenants otherwise.
    v_tenants uuid[];
begin
    if p_limit is null or p_limit < 1 or p_limit > 200 or p_offset is null or p_offset < 0 or p_offset > 1000 then
        raise exception using errcode = '22023', message = 'limit must be 1..200 and offset 0..1000';
    end if;
    -- Each ranking goes deeper than the page, so fusion can promote what one side ranks lower.
    v_depth := greatest(p_limit + p_offset, 50);
    if not memory_private.reads_user_messages(v_user) then
        return;
    end if;
    if not coalesce(auth.uid() = v_user, true) then
        v_tenants := memory_private.administered_tenants();
    end if;
    with by_text as (
        select l.message_id as id, l.score
        from memory_private.lexical_messages(v_user, p_query, p_conversation_id, v_depth) as l
    ),
    -- The memories the words find lead to the turns they were drawn from, one probe each (the
    -- lateral's limit keeps it so: joined as a set, a small memories table was scanned whole for
    -- every search).
    by_memory as (
        select mm.source_message_id as id, max(l.score) as score
        from memory_private.lexical_memories(v_user, p_query, v_depth) as l
        cross join lateral (
            select x.source_message_id from memory.memories as x
            where x.id = l.memory_id and x.source_message_id is not null
                and (p_conversation_id is null or x.source_conversation_id = p_conversation_id)
            limit 1
        ) as mm
        group by mm.source_message_id
    ),
    lexical as (
        select coalesce(t.id, v.id) as id, coalesce(t.score, 0) + coalesce(v.score, 0) as score
        from by_text as t
        full join by_memory as v on v.id = t.id
    ),
    -- Without an embedding the vector side is not called.
    semantic as (
        select n.message_id as id, n.distance
        from memory_private.vector_messages(v_user, p_query_embedding, p_conversation_id, v_depth) as n
        where p_query_embedding is not null
    ),
    -- Either side's best scores 1; a turn one side did not find adds nothing from it.
    scaled as (
        select l.id, coalesce(l.score / nullif(max(l.score) over (), 0), 1) as score
        from lexical as l
        union all
        select s.id, memory_private.nearness(s.distance, min(s.distance) over (), max(s.distance) over ())
        from semantic as s
    ),
    fused as (
        select c.id, sum(c.score) as score from scaled as c group by c.id
    )
    select array_agg(f.id order by f.score desc, f.id) into v_ids from fused as f;
    -- The page is read by id: one primary-key probe per fused id, in rank order (the lateral's
    -- limit keeps it a probe per id, where a join could scan the user's messages). An admin reads
    -- only the messages of the tenants they administer, as under the messages policy.
    return query
    select m.*
    from unnest(v_ids) with ordinality as f (id, position)
    cross join lateral (
        select x.* from memory.messages as x
        where x.id = f.id and x.user_id = v_user and (x.expires_at is null or x.expires_at > now())
            and (v_tenants is null or x.tenant_id = any(v_tenants))
        limit 1
    ) as m
    order by f.position
    limit p_limit offset p_offset;
end
$function$;


revoke all on function memory.job_input(bigint, text) from public, anon, authenticated, service_role;
grant execute on function memory.job_input(bigint, text) to service_role;
revoke all on function memory.search_memories(
    text,
    uuid,
    text,
    text,
    uuid,
    uuid,
    timestamp with time zone,
    timestamp with time zone,
    text,
    integer,
    integer,
    extensions.vector
)
from public, anon, authenticated, service_role;
grant execute on function memory.search_memories(
    text,
    uuid,
    text,
    text,
    uuid,
    uuid,
    timestamp with time zone,
    timestamp with time zone,
    text,
    integer,
    integer,
    extensions.vector
)
to authenticated, service_role;
revoke all on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory.select_memories(uuid, uuid, text, integer, integer, bigint, boolean, extensions.vector)
to authenticated, service_role;
revoke all on function memory_private.nearness(double precision, double precision, double precision)
from public, anon, authenticated, service_role;
grant execute on function memory_private.nearness(double precision, double precision, double precision)
to authenticated, service_role;
revoke all on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
from public, anon, authenticated, service_role;
grant execute on function memory_private.search_messages(text, uuid, uuid, integer, integer, extensions.vector)
to authenticated, service_role;
