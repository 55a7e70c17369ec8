-- Why: an update never edits a fact in place: the new version is a new memory and the old one
-- becomes inactive and points at it, so contradicting facts never both stay active and the history
-- shows what the user used to believe. The new version keeps the old one's pinned, archived and
-- expiry state.
create function memory.revise_memory(
    p_memory_id uuid,
    p_content text,
    p_type text default null,
    p_category text default null,
    p_confidence numeric default null,
    p_source_message_id bigint default null,
    p_user_id uuid default null
)
returns memory.memories
language plpgsql
set search_path = ''
as $$
begin
    return memory_private.revise_memory(
        p_memory_id, p_content, p_type, p_category, p_confidence, p_source_message_id, p_user_id
    );
end
$$;

revoke all on function memory.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
to authenticated, service_role;

-- Why: memory.revise_memory's body, run as the owner: the new version is a new
-- memory and the old one becomes inactive and points at it. The new version keeps the old one's
-- pinned, archived and expiry state: revising an archived memory edits it in the archive
-- (unarchive_memory is the way back, within the cap).
create function memory_private.revise_memory(
    p_memory_id uuid,
    p_content text,
    p_type text,
    p_category text,
    p_confidence numeric,
    p_source_message_id bigint,
    p_user_id uuid
)
returns memory.memories
language plpgsql
security definer
set search_path = ''
as $$
declare
    v_scope uuid := memory_private.memory_scope();
    v_old memory.memories;
    v_new memory.memories;
begin
    -- The user's row before the memory's (memory_private.lock_memory_writer).
    perform memory_private.lock_memory_writer((
        select m.user_id from memory.memories as m
        where m.id = p_memory_id and m.user_id = coalesce(v_scope, m.user_id)
            and (p_user_id is null or m.user_id = p_user_id)
    ));
    select m.* into v_old from memory.memories as m
    where m.id = p_memory_id and m.user_id = coalesce(v_scope, m.user_id)
        and (p_user_id is null or m.user_id = p_user_id)
    for update;
    if not found then
        raise exception using errcode = 'P0002', message = 'memory not found';
    end if;
    perform memory_private.check_memory_fields(p_type, p_category, p_confidence);
    if not v_old.active then
        raise exception using errcode = '55000', message = 'only an active memory can be revised',
            detail = format('memory %s is %s', p_memory_id,
                case when v_old.deleted_at is not null then 'deleted' else 'superseded' end);
    end if;
    insert into memory.memories (
        user_id, profile_id, content, type, category, confidence, context, pinned, archived, expires_at,
        source_message_id
    )
    values (
        -- An empty category clears it (null keeps the old one).
        v_old.user_id, v_old.profile_id, coalesce(p_content, v_old.content), coalesce(p_type, v_old.type),
        case when coalesce(p_category, v_old.category) ~ '[^[:space:]]' then coalesce(p_category, v_old.category) end,
        coalesce(p_confidence, v_old.confidence), v_old.context, v_old.pinned, v_old.archived, v_old.expires_at,
        p_source_message_id
    )
    returning * into v_new;
    update memory.memories as m set active = false, superseded_by = v_new.id where m.id = p_memory_id;
    return v_new;
end
$$;

revoke all on function memory_private.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
from public, anon, authenticated, service_role;
grant execute on function memory_private.revise_memory(uuid, text, text, text, numeric, bigint, uuid)
to authenticated, service_role;
