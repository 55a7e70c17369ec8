-- Why: the one body of an extraction's application (gate, ledger, idempotency, add / update /
-- delete), for the direct apply_extraction RPC and the job's finish_extraction alike. The direct
-- RPC meets the rate limit (54000); a job admitted under it by job_input has its answer applied.
create function memory_private.extract_memories(
    p_source_message_id bigint, p_memories jsonb, p_user_id uuid, p_enforce_rate_limit boolean
)
returns table (memory_id uuid, outcome text)
language plpgsql
set search_path = ''
as $$
declare
    v_user uuid := memory_private.acting_user(p_user_id);
    v_item jsonb;
    v_reason text;
    v_target uuid;
    v_ids uuid [] := '{}';
begin
    if jsonb_typeof(p_memories) is distinct from 'array' or jsonb_array_length(p_memories) > 3 then
        raise exception using errcode = '22023', message = 'memories must be a JSON array of at most 3 items';
    end if;
    -- A closed gate leaves no ledger row: the message can still be extracted for its real author.
    v_reason := memory_private.memory_gate(v_user, p_source_message_id);
    if v_reason is not null then
        return query select null::uuid, 'skipped: ' || v_reason;
        return;
    end if;
    -- The ledger row first: a retry, or a concurrent run that waited on this row, changes nothing.
    insert into memory.memory_extractions (source_message_id, user_id)
    values (p_source_message_id, v_user)
    on conflict (source_message_id) do nothing;
    if not found then
        return query
        select unnest(e.memory_ids), 'already extracted'::text
        from memory.memory_extractions as e where e.source_message_id = p_source_message_id;
        return;
    end if;
    -- The row just written counts, so more than the limit means this one is over it.
    if p_enforce_rate_limit and (select count(*) from memory.memory_extractions as e
        where e.user_id = v_user and e.created_at > now() - interval '1 minute')
        > (memory_private.setting('extraction_rate_limit'))::integer then
        raise exception using errcode = '54000',
            message = format('rate limit: %s extractions per user per minute', memory_private.setting('extraction_rate_limit')),
            hint = 'Retry after a minute.';
    end if;
    -- The user's row before any memory's: an operation may lock a memory, a later one number a new one.
    perform memory_private.lock_memory_writer(v_user);
    for v_item in select jsonb_array_elements(p_memories) loop
        case coalesce(v_item ->> 'op', 'add')
            when 'add' then
                select r.memory_id, r.outcome into memory_id, outcome from memory.remember(
                    p_content => v_item ->> 'content',
                    p_type => v_item ->> 'type',
                    p_user_id => v_user,
                    p_category => v_item ->> 'category',
                    p_confidence => coalesce((v_item ->> 'confidence')::numeric, 0.8),
                    p_context => coalesce(v_item -> 'context', '{}'),
                    p_source_message_id => p_source_message_id
                ) as r;
            when 'update' then
                v_target := (v_item ->> 'memory_id')::uuid;
                if not exists (select 1 from memory.memories as m where m.id = v_target and m.user_id = v_user) then
                    raise exception using errcode = 'P0002', message = format('memory %s not found for this user', v_target);
                end if;
                memory_id := (memory.revise_memory(
                    v_target, v_item ->> 'content', v_item ->> 'type', v_item ->> 'category',
                    (v_item ->> 'confidence')::numeric, p_source_message_id
                )).id;
                outcome := 'superseded';
            when 'delete' then
                v_target := (v_item ->> 'memory_id')::uuid;
                if not exists (select 1 from memory.memories as m where m.id = v_target and m.user_id = v_user) then
                    raise exception using errcode = 'P0002', message = format('memory %s not found for this user', v_target);
                end if;
                memory_id := (memory.forget(v_target)).id;
                outcome := 'deleted';
            when 'none' then
                continue;
            else
                raise exception using errcode = '22023', message = format('unknown operation %L', v_item ->> 'op'),
                    hint = 'op is one of add, update, delete, none';
        end case;
        v_ids := v_ids || memory_id;
        return next;
    end loop;
    update memory.memory_extractions as e set memory_ids = v_ids where e.source_message_id = p_source_message_id;
end
$$;

revoke all on function memory_private.extract_memories(bigint, jsonb, uuid, boolean)
from public, anon, authenticated, service_role;
grant execute on function memory_private.extract_memories(bigint, jsonb, uuid, boolean) to service_role;
