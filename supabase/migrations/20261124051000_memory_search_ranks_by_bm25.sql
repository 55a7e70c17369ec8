-- Memory search ranks by BM25 and refuses what it cannot serve.
--
-- Why: search_memories ranked with ts_rank_cd, which ignores how rare a word is, while
-- search_messages ranks by BM25 (20261124050600); the Settings tab's keyword search now ranks
-- the same way (memory_private.lexical_memories), with the typo fallback (trigram word
-- similarity) after the keyword matches. A null status returned deleted memories with the live
-- ones, and a query of any length was compared with every memory's text: a missing status and a
-- query over 1,000 characters are now 22023.

create or replace function memory.search_memories(
    p_query text default null,
    p_user_id uuid default null,
    p_type text default null,
    p_category text default null,
    p_profile_id uuid default null,
    p_conversation_id uuid default null,
    p_created_from timestamptz default null,
    p_created_to timestamptz default null,
    p_status text default 'active',
    p_limit integer default 20,
    p_offset integer default 0
)
returns setof memory.memories
language plpgsql
stable
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_query tsquery := case when p_query ~ '[[:alnum:]]' then websearch_to_tsquery('english', p_query) end;
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
    with ranked as (
        select l.memory_id, l.score from memory_private.lexical_memories(v_user, p_query, 1000) as l
    )
    select m.*
    from memory.memories as m
    left join ranked as r on r.memory_id = m.id
    where m.user_id = v_user
        and (p_query is null or m.search @@ v_query or extensions.word_similarity(p_query, m.content) >= 0.4)
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
$$;


revoke execute on all routines in schema memory, memory_private from public;
